-- TEST ONLY ground truth for PokeGym's Minetest tests: every 0.1 s, the player's position (nodes), look yaw and
-- pitch (radians) and the server clock, written to <world>/pokegym_truth.txt through a temporary file and a
-- rename, so a reader never sees a half-written file. Agents and the evaluator never read this file.
local path = minetest.get_worldpath() .. "/pokegym_truth.txt"
local elapsed = 0
minetest.register_globalstep(function(dtime)
  elapsed = elapsed + dtime
  if elapsed < 0.1 then return end
  elapsed = 0
  local player = minetest.get_connected_players()[1]
  if not player then return end
  local p = player:get_pos()
  local f = io.open(path .. ".tmp", "w")
  if not f then return end
  f:write(string.format("%.4f %.4f %.4f %.5f %.5f %.4f\n", p.x, p.y, p.z, player:get_look_horizontal(),
    player:get_look_vertical(), minetest.get_us_time() / 1e6))
  f:close()
  os.rename(path .. ".tmp", path)
end)
