-- The fan-out finds each inserted message's devices by index (devices_pkey for
-- device_id, devices_user for user_id), one lookup per message. Left to the
-- planner, a multi-row insert read and hashed the whole of push.devices: 4.7 ms
-- of the 10 ms that 1,000 messages took at 20,000 devices, and growing with the
-- table. JIT off: these are short statements, and compiling costs more than
-- running them.
alter function push.fan_out() set enable_hashjoin = off;
alter function push.fan_out() set enable_mergejoin = off;
alter function push.fan_out() set jit = off;
