import { wire } from "@switchboard/proto";
import { z } from "zod";
import {
  cursorParam,
  e164,
  idOf,
  limitParam,
  page,
  resourceId,
  text,
  timestamp,
} from "./common.js";
import { story } from "./story.js";

/** Seats, agents and routes of call-control (docs/api.md "Seats, agents, routes"). */
export const seatId = idOf("seat", "must be a seat id (seat_…)");
export const agentName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "must match ^[a-z0-9][a-z0-9._-]{0,63}$")
  .meta({ maxLength: 64, examples: [story.agent] })
  .describe("An agent's name: unique per account, ^[a-z0-9][a-z0-9._-]{0,63}$");
const resourceName = (example: string) =>
  z
    .string()
    .max(128)
    .refine((value) => value.trim() !== "", "must not be empty or only spaces")
    .describe("A name for people, up to 128 characters (not blank)")
    .meta({ examples: [example] });
const agentDescription = "Answers the front desk line on weekdays";
const seatStatus = z
  .enum(wire.seatStatus.values)
  .describe("active takes calls; disabled takes none");
const maxConcurrentCalls = z
  .number()
  .int()
  .min(1)
  .max(10_000)
  .describe("How many calls the seat may hold at once, 1–10000");

const seatSip = z
  .object({
    username: text("The digest username: the seat's id", story.seatId),
    domain: text(
      "The SIP domain, also the digest realm: the phone registers sip:<username>@<domain>",
      "sip.switchboard.test",
    ),
    registered: z.boolean().describe("A registration of the seat's phone is live now"),
    contact: z
      .string()
      .nullable()
      .describe("The contact URI of the latest live registration (null when none)")
      .meta({ examples: ["sip:front-desk@192.0.2.10:5060;transport=udp"] }),
  })
  .meta({ id: "SeatSip", description: "The seat as a SIP endpoint" });

const seatFields = {
  id: resourceId("seat"),
  name: text("A name for people", "front desk"),
  max_concurrent_calls: z
    .number()
    .int()
    .describe("How many calls the seat may hold at once")
    .meta({ examples: [2] }),
  status: seatStatus,
  active_calls: z.number().int().describe("Live calls counted against max_concurrent_calls"),
  sip: seatSip.describe("The seat as a SIP endpoint"),
  created_at: timestamp.describe("When the seat was created"),
  updated_at: timestamp.describe("When it last changed"),
};

export const seat = z.object(seatFields).meta({ id: "Seat" });

/** A seat with its SIP password: the answer of creation and of credential rotation only. */
export const seatWithSipPassword = z
  .object({
    ...seatFields,
    sip: seatSip
      .extend({
        password: text(
          "The SIP digest password, shown only in this response: store it in the phone now",
          "Xq7vN2mK9pR4tY8zL1bH6cF3",
        ),
      })
      .meta({
        id: "SeatSipWithPassword",
        description: "The seat as a SIP endpoint, with its password",
      })
      .describe("The seat as a SIP endpoint, with its password"),
  })
  .meta({ id: "SeatWithSipPassword" });

export const seatCreate = z
  .object({
    name: resourceName("front desk"),
    max_concurrent_calls: maxConcurrentCalls.optional().describe("1–10000 (default 1)"),
    status: seatStatus.optional().describe("Default active; a disabled seat takes no calls"),
  })
  .strict();

export const seatUpdate = z
  .object({
    name: resourceName("front desk").optional(),
    max_concurrent_calls: maxConcurrentCalls.optional(),
    status: seatStatus.optional(),
  })
  .strict();

export const agent = z
  .object({
    id: resourceId("agt"),
    name: text("Unique per account: how calls and routes name the agent", story.agent),
    description: z
      .string()
      .nullable()
      .describe("What the agent does, for people")
      .meta({ examples: [agentDescription] }),
    created_at: timestamp.describe("When the agent was created"),
    updated_at: timestamp.describe("When it last changed"),
  })
  .meta({ id: "Agent" });

const description = z
  .string()
  .max(1024)
  .describe("What the agent does, for people (up to 1024 characters)")
  .meta({ examples: [agentDescription] });

export const agentCreate = z
  .object({
    name: agentName,
    description: description.nullable().optional().describe("What the agent does, for people"),
  })
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
    name: text("A name for people", "front desk line"),
    numbers: z.array(e164).describe("The numbers whose inbound calls ring under this route"),
    agent: text("The agent's name", story.agent),
    seat_id: resourceId("seat").nullable().describe("The seat the calls ring; null: none"),
    created_at: timestamp.describe("When the route was created"),
    updated_at: timestamp.describe("When it last changed"),
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
    name: resourceName("front desk line"),
    numbers: routeNumbers,
    agent: agentName,
    seat_id: seatId.optional().describe("The seat the calls ring"),
  })
  .strict();

export const routeUpdate = z
  .object({
    name: resourceName("front desk line").optional(),
    numbers: routeNumbers.optional().describe("Replaces the route's numbers"),
    agent: agentName.optional(),
    seat_id: seatId.nullable().optional().describe("null removes the seat"),
  })
  .strict();

export const listQuery = z.object({ limit: limitParam, cursor: cursorParam }).strict();

export const seatsPage = page(seat).meta({ id: "SeatPage" });
export const agentsPage = page(agent).meta({ id: "AgentPage" });
export const routesPage = page(route).meta({ id: "RoutePage" });
