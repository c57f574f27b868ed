// Generated gRPC contracts (buf generate + ts-proto). Do not edit the files under gen/.
export * as inventory from "./gen/switchboard/inventory/v1/inventory.js";
