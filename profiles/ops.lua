-- profiles/ops.lua — coding for operations work: a command the sandbox refused (a write
-- outside the workspace, sudo, the Docker daemon) may be re-run outside the sandbox after a
-- person approves it (Allow once / Allow for session / Deny; no answer in time means Deny).
return {
    extends = "coding",
    description = "coding, plus asking a person before re-running a refused command unsandboxed",
    escalation = {
        ask_sandbox_off = true,
    },
}
