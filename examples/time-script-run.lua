-- time-script-run.lua: time the test from the script that starts it.
--
-- Shows: run() starts the test and returns when both workers and the
-- results are done; code before and after it runs in the main thread.
--
--   netstage tcp_rr --local -l 3 -q --script examples/time-script-run.lua
--
-- Prints "Script ran for N seconds." on stderr (N is the test length,
-- give or take the second os.time() rounds to).

local started = os.time()

run()

io.stderr:write(string.format("Script ran for %d seconds.\n",
                              os.time() - started))
