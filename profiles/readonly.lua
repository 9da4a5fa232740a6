-- profiles/readonly.lua — coding, but the workspace itself is read-only: for commands that
-- should only look (review, search, audit). /tmp stays writable.
return {
    extends = "coding",
    description = "coding with a read-only workspace",
    workspace_readonly = true,
}
