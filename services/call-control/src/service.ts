import { notFound, unary, type GrpcService, type Logger, type Pool } from "@switchboard/kit";
import { callcontrol } from "@switchboard/proto";
import type { CallEngine } from "./calls/call-engine.js";
import { getCall, listCalls } from "./calls/call-queries.js";
import { toCall } from "./calls/call-rows.js";
import { createOutboundCall } from "./calls/create-outbound.js";
import { hangupCall } from "./calls/hangup.js";
import { answerInboundCall, receiveInboundCall } from "./calls/inbound.js";
import type { NumberDirectory } from "./inventory-directory.js";
import {
  createAgent,
  deleteAgent,
  getAgent,
  listAgents,
  toAgent,
  updateAgent,
} from "./resources/agents.js";
import { toRoute } from "./resources/route-rows.js";
import { createRoute, deleteRoute, getRoute, listRoutes, updateRoute } from "./resources/routes.js";
import {
  createSeat,
  deleteSeat,
  getSeat,
  listSeats,
  rotateSeatSipCredentials,
  toSeat as seatMessage,
  updateSeat,
  type SeatRow,
} from "./resources/seats.js";
import type { StirCertificates } from "./stir-shaken/certificate.js";
import type { PassportSigner } from "./stir-shaken/passport.js";

export interface CallControlServiceOptions {
  pool: Pool;
  logger: Logger;
  engine: CallEngine;
  directory: NumberDirectory;
  signer: PassportSigner;
  certificates: StirCertificates;
  /** The PASSporT's x5u: the public URL of the certificate. */
  certificateUrl: string;
  inboundRingTimeoutSeconds: number;
  /** SIP_DOMAIN: the seats' SIP domain and digest realm. */
  sipDomain: string;
}

/** The gateway's request id (`req_…`), forwarded as metadata; anything else is ignored. */
const requestIdOf = (value: unknown): string | undefined =>
  typeof value === "string" && /^req_[0-9a-z]{26}$/.test(value) ? value : undefined;

/** The CallControlService gRPC handlers: each a thin adapter over one operation module. */
export function createCallControlService(options: CallControlServiceOptions): GrpcService {
  const { pool, logger, engine, directory, sipDomain } = options;
  const toSeat = (row: SeatRow) => seatMessage(row, sipDomain);
  const page = <R, T>(
    p: { items: R[]; nextCursor: string; hasMore: boolean },
    map: (r: R) => T,
  ) => ({
    items: p.items.map(map),
    nextCursor: p.nextCursor,
    hasMore: p.hasMore,
  });
  const implementation: callcontrol.CallControlServiceServer = {
    createSeat: unary(logger, async (r: callcontrol.CreateSeatRequest, context) => {
      const { seat, sipPassword } = await createSeat(pool, r, sipDomain, context.idempotencyKey);
      return { seat: toSeat(seat), sipPassword };
    }),
    getSeat: unary(logger, async (r: callcontrol.GetSeatRequest) => ({
      seat: toSeat(await getSeat(pool, r)),
    })),
    listSeats: unary(logger, async (r: callcontrol.ListSeatsRequest) => {
      const { items, ...rest } = page(await listSeats(pool, r), toSeat);
      return { seats: items, ...rest };
    }),
    updateSeat: unary(logger, async (r: callcontrol.UpdateSeatRequest) => ({
      seat: toSeat(await updateSeat(pool, r)),
    })),
    deleteSeat: unary(logger, async (r: callcontrol.DeleteSeatRequest) => {
      await deleteSeat(pool, r);
      return {};
    }),
    rotateSeatSipCredentials: unary(
      logger,
      async (r: callcontrol.RotateSeatSipCredentialsRequest) => {
        const { seat, sipPassword } = await rotateSeatSipCredentials(pool, r, sipDomain);
        return { seat: toSeat(seat), sipPassword };
      },
    ),

    createAgent: unary(logger, async (r: callcontrol.CreateAgentRequest, context) => ({
      agent: toAgent(await createAgent(pool, r, context.idempotencyKey)),
    })),
    getAgent: unary(logger, async (r: callcontrol.GetAgentRequest) => ({
      agent: toAgent(await getAgent(pool, r)),
    })),
    listAgents: unary(logger, async (r: callcontrol.ListAgentsRequest) => {
      const { items, ...rest } = page(await listAgents(pool, r), toAgent);
      return { agents: items, ...rest };
    }),
    updateAgent: unary(logger, async (r: callcontrol.UpdateAgentRequest) => ({
      agent: toAgent(await updateAgent(pool, r)),
    })),
    deleteAgent: unary(logger, async (r: callcontrol.DeleteAgentRequest) => {
      await deleteAgent(pool, r);
      return {};
    }),

    createRoute: unary(logger, async (r: callcontrol.CreateRouteRequest, context) => ({
      route: toRoute(await createRoute(pool, directory, r, context.idempotencyKey)),
    })),
    getRoute: unary(logger, async (r: callcontrol.GetRouteRequest) => ({
      route: toRoute(await getRoute(pool, r)),
    })),
    listRoutes: unary(logger, async (r: callcontrol.ListRoutesRequest) => {
      const { items, ...rest } = page(await listRoutes(pool, r), toRoute);
      return { routes: items, ...rest };
    }),
    updateRoute: unary(logger, async (r: callcontrol.UpdateRouteRequest) => ({
      route: toRoute(await updateRoute(pool, directory, r)),
    })),
    deleteRoute: unary(logger, async (r: callcontrol.DeleteRouteRequest) => {
      await deleteRoute(pool, r);
      return {};
    }),

    createOutboundCall: unary(logger, async (r: callcontrol.CreateOutboundCallRequest, context) => {
      const placed = await createOutboundCall(
        { pool, engine, directory, signer: options.signer, certificateUrl: options.certificateUrl },
        r,
        context.idempotencyKey,
        requestIdOf(context.metadata.get("x-request-id")[0]),
      );
      return { call: toCall(placed.row), replayed: placed.replayed };
    }),
    getCall: unary(logger, async (r: callcontrol.GetCallRequest) => ({
      call: toCall(await getCall(pool, r)),
    })),
    listCalls: unary(logger, async (r: callcontrol.ListCallsRequest) => {
      const { items, ...rest } = page(await listCalls(pool, r), toCall);
      return { calls: items, ...rest };
    }),
    hangupCall: unary(logger, async (r: callcontrol.HangupCallRequest, context) => ({
      call: toCall(await hangupCall(engine, r, context.idempotencyKey)),
    })),
    answerInboundCall: unary(logger, async (r: callcontrol.AnswerInboundCallRequest, context) => ({
      call: toCall(await answerInboundCall(engine, r, context.idempotencyKey)),
    })),
    deliverSandboxInboundCall: unary(
      logger,
      async (r: callcontrol.DeliverSandboxInboundCallRequest) => {
        if (!engine.carrier.simulated) throw notFound("the sandbox (another carrier is active)");
        const row = await receiveInboundCall(
          { engine, directory, ringTimeoutSeconds: options.inboundRingTimeoutSeconds },
          r,
        );
        return { call: toCall(row) };
      },
    ),
    getStirShakenCertificate: unary(logger, async () => {
      const certificate = await options.certificates.active();
      return {
        certificatePem: certificate.pem,
        kid: certificate.kid,
        notAfter: certificate.notAfter.toISOString(),
      };
    }),
  };
  return { definition: callcontrol.CallControlServiceService, implementation };
}
