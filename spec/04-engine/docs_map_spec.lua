-- spec/04-engine/docs_map_spec.lua — the map stays true: the README stays a newcomer's page
-- that links every page of docs/, docs/architecture.md names every C source file of engine/,
-- and every header of sandbox/ and session/ begins with the process that runs its code.
-- Uses: the source tree only (ls and the files' text); no binary, nothing run.
-- Never: judges what the pages say; only that the names are there.
local h = require("spec.helpers")

local root = h.source_dir

--- The lines `ls` prints for a shell pattern under the source tree (names relative to it).
local function listing(pattern)
    local r = h.sh("cd " .. h.quote(root) .. " && ls " .. pattern)
    local out = {}
    for name in r.stdout:gmatch("[^\n]+") do out[#out + 1] = name end
    return out
end

describe("the map of the source", function()
    it("README.md is at most 300 lines and links every page of docs/", function()
        local readme = assert(h.read_file(root .. "/README.md"))
        local _, lines = readme:gsub("\n", "\n")
        assert.is_true(lines <= 300, "README.md has " .. lines .. " lines, more than 300")
        local unlinked = {}
        for _, page in ipairs(listing("docs/*.md")) do
            if not readme:find("(" .. page .. ")", 1, true) and not readme:find("(" .. page .. "#", 1, true) then
                unlinked[#unlinked + 1] = page
            end
        end
        assert.are.same({}, unlinked)
    end)

    it("docs/architecture.md names every C source file of engine/", function()
        local map = assert(h.read_file(root .. "/docs/architecture.md"))
        local missing = {}
        for _, file in ipairs(listing("engine/*/*.c")) do
            local name = file:match("([^/]+)$")
            if not map:find("`" .. name .. "`", 1, true) then missing[#missing + 1] = file end
        end
        assert.are.same({}, missing)
    end)

    it("every header of sandbox/ and session/ begins with the process that runs it", function()
        local without = {}
        for _, header in ipairs(listing("engine/sandbox/*.h engine/session/*.h")) do
            local first = (h.read_file(root .. "/" .. header) or ""):match("^[^\n]*")
            if not first:match("^/%* Runs in: ") then without[#without + 1] = header end
        end
        assert.are.same({}, without)
    end)
end)
