-- netstage's Lua prelude: run in the main state and in every worker's
-- state after the C bindings are in place. It adds what scripts written
-- for LuaJIT and ljsyscall expect and Lua 5.3 lacks.

-- LuaJIT's bit library, on 5.3's integer operators (results are 32-bit
-- signed, as LuaJIT's are).
local function tobit(x)
  x = x & 0xffffffff
  if x >= 0x80000000 then x = x - 0x100000000 end
  return x
end

bit = {
  tobit = tobit,
  bnot = function(x) return tobit(~x) end,
  bor = function(x, ...)
    for _, y in ipairs({...}) do x = x | y end
    return tobit(x)
  end,
  band = function(x, ...)
    for _, y in ipairs({...}) do x = x & y end
    return tobit(x)
  end,
  bxor = function(x, ...)
    for _, y in ipairs({...}) do x = x ~ y end
    return tobit(x)
  end,
  lshift = function(x, n) return tobit(x << (n & 31)) end,
  rshift = function(x, n) return tobit((x & 0xffffffff) >> (n & 31)) end,
  arshift = function(x, n)
    local v = tobit(x)
    if v >= 0 then return v >> (n & 31) end
    return tobit(~((~v) >> (n & 31)))
  end,
}

-- Lua 5.1's table.maxn: the largest positive numeric key.
if table.maxn == nil then
  table.maxn = function(t)
    local max = 0
    for k in pairs(t) do
      if type(k) == "number" and k > max then max = k end
    end
    return max
  end
end

-- ljsyscall's spelling of constants: S.c.AF.INET for AF_INET.
S.c = {}
for name, value in pairs(S) do
  local prefix, rest = string.match(name, "^(%u+%d*)_([%w_]+)$")
  if prefix and type(value) == "number" then
    S.c[prefix] = S.c[prefix] or {}
    S.c[prefix][rest] = value
  end
end
