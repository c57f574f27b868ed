import { wire } from "@switchboard/proto";
import { z } from "zod";
import { cursorParam, e164, idOf, limitParam, page, resourceId, timestamp } from "./common.js";

/** Seats, agents and routes of call-control (docs/api.md "Seats, agents, routes"). */
export const seatId = idOf("seat", "must be a seat id (seat_…)");
export const agentName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "must match ^[a-z0-9][a-z0-9._-]{0,63}$")
  .meta({ maxLength: 64 })
  .describe("An agent's name: unique per account, ^[a-z0-9][a-z0-9._-]{0,63}$");
const resourceName = z
  .string()
  .max(128)
  .refine((value) => value.trim() !== "", "must not be empty or only spaces");
const seatStatus = z.enum(wire.seatStatus.values);
const maxConcurrentCalls = z.number().int().min(1).max(10_000);

const seatSip = z
  .object({
    username: z.string().describe("The digest username: the seat's id"),
    domain: z
      .string()
      .describe(
        "The SIP domain, also the digest realm: the phone registers sip:<username>@<domain>",
      ),
    registered: z.boolean().describe("A registration of the seat's phone is live now"),
    contact: z
      .string()
      .nullable()
      .describe("The contact URI of the latest live registration (null when none)"),
  })
  .meta({ id: "SeatSip" });

const seatFields = {
  id: resourceId("seat"),
  name: z.string(),
  max_concurrent_calls: z.number().int(),
  status: seatStatus,
  active_calls: z.number().int().describe("Live calls counted against max_concurrent_calls"),
  sip: seatSip.describe("The seat as a SIP endpoint"),
  created_at: timestamp,
  updated_at: timestamp,
};

export const seat = z.object(seatFields).meta({ id: "Seat" });

/** A seat with its SIP password: the answer of creation and of credential rotation only. */
export const seatWithSipPassword = z
  .object({
    ...seatFields,
    sip: seatSip
      .extend({
        password: z
          .string()
          .describe(
            "The SIP digest password, shown only in this response: store it in the phone now",
          ),
      })
      .meta({ id: "SeatSipWithPassword" }),
  })
  .meta({ id: "SeatWithSipPassword" });

export const seatCreate = z
  .object({
    name: resourceName,
    max_concurrent_calls: maxConcurrentCalls.optional().describe("1–10000 (default 1)"),
    status: seatStatus.optional().describe("Default active; a disabled seat takes no calls"),
  })
  .strict();

export const seatUpdate = z
  .object({
    name: resourceName.optional(),
    max_concurrent_calls: maxConcurrentCalls.optional(),
    status: seatStatus.optional(),
  })
  .strict();

export const agent = z
  .object({
    id: resourceId("agt"),
    name: z.string(),
    description: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Agent" });

const description = z.string().max(1024);

export const agentCreate = z
  .object({ name: agentName, description: description.nullable().optional() })
  .strict();

export const agentUpdate = z
  .object({
    name: agentName.optional(),
    description: description.nullable().optional().describe("null clears it"),
  })
  .strict();

export const route = z
  .object({
    id: resourceId("rte"),
    name: z.string(),
    numbers: z.array(e164),
    agent: z.string().describe("The agent's name"),
    seat_id: resourceId("seat").nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Route" });

const routeNumbers = z
  .array(e164)
  .max(100)
  .describe(
    "E.164 numbers assigned to the account (at most 100); each belongs to at most one route",
  );

export const routeCreate = z
  .object({
    name: resourceName,
    numbers: routeNumbers,
    agent: agentName,
    seat_id: seatId.optional(),
  })
  .strict();

export const routeUpdate = z
  .object({
    name: resourceName.optional(),
    numbers: routeNumbers.optional().describe("Replaces the route's numbers"),
    agent: agentName.optional(),
    seat_id: seatId.nullable().optional().describe("null removes the seat"),
  })
  .strict();

export const listQuery = z.object({ limit: limitParam, cursor: cursorParam }).strict();

export const seatsPage = page(seat).meta({ id: "SeatPage" });
export const agentsPage = page(agent).meta({ id: "AgentPage" });
export const routesPage = page(route).meta({ id: "RoutePage" });
