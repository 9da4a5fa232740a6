-- spec/helpers.lua — loaded by busted before every spec layer (--helper). Placeholder until the
-- integration helpers land; must load under plain lua5.4.
return {}
