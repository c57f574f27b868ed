export * from "./bucket.js";
export * from "./memory.js";
export * from "./redis.js";
export * from "./script.js";
