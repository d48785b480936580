#include "script/lbase.h"

void lbase_new_type(lua_State *L, const char *name, const luaL_Reg *m)
{
	luaL_newmetatable(L, name);
	luaL_setfuncs(L, m, 0);
	lua_pop(L, 1);
}
