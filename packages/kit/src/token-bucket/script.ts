/**
 * The token bucket as one atomic Redis script, so every gateway replica shares one bucket per
 * key. Time comes from Redis `TIME` (never from the replicas' clocks), in microseconds.
 *
 * KEYS[1]  the bucket
 * ARGV[1]  capacity (tokens)
 * ARGV[2]  refill (tokens per second)
 * ARGV[3]  cost of this request (tokens)
 * returns  { allowed (1|0), tokens left (string, fractional) }
 *
 * A missing bucket is a full one; the key expires once it would be full again, so idle
 * clients cost no memory. A clock that went backwards refills nothing.
 */
export const TOKEN_BUCKET_SCRIPT = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = capacity
local at = tonumber(state[2])
if state[1] and at then
  local elapsed = math.max(0, now - at) / 1000000
  tokens = math.min(capacity, tonumber(state[1]) + elapsed * rate)
end
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
local left = string.format('%.6f', tokens)
redis.call('HSET', KEYS[1], 'tokens', left, 'at', string.format('%.0f', now))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / rate * 1000) + 1000)
return { allowed, left }
`;
