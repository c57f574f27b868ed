import type { Logger } from "@switchboard/kit";
import type { Tx } from "../../scheduler/tx.js";
import type {
  ClientTransaction,
  ClientTransactionEvents,
} from "../../sip/stack/client-transactions.js";
import {
  ackFor2xx,
  answerOf,
  cancelOf,
  inDialogRequest,
} from "../../sip/dialogs/dialog-requests.js";
import {
  confirmDialog,
  type Answered,
  dialogsOf,
  flowOf,
  terminateDialog,
  type Dialog,
  type DialogLeg,
  type DialogState,
  type NewDialog,
} from "../../sip/dialogs/dialogs.js";
import type { SipEndpoint } from "../../sip/stack/endpoint.js";
import type { NameAddress, SipRequest, SipResponse } from "../../sip/stack/message.js";
import { refusingAnswer } from "../../sip/stack/sdp.js";
import type { SipFlow, SipTransportName } from "../../sip/stack/transport.js";
import type { MediaRelay } from "./sip-media.js";
import type { PhoneMediaState } from "./sip-phone-media.js";

/** How long a 2xx may still be retransmitted after the last ACK (RFC 3261: 64·T1). */
const setupLingerMs = 32_000;
const legs: DialogLeg[] = ["phone", "trunk"];

/** This process's part of a call being set up: its client transactions and the ACKs it sent. */
export interface Setup {
  invites: Partial<Record<DialogLeg, ClientTransaction>>;
  /** Sent again for each retransmitted 2xx. */
  acks: Partial<Record<DialogLeg, { ack: SipRequest; flow: SipFlow }>>;
  answered: Set<DialogLeg>;
  challenges: number;
  /** An outbound call's phone: the re-INVITEs giving it the trunk's media (sip-phone-media.ts). */
  phoneMedia: PhoneMediaState;
}

export interface SipLegs {
  /** The call's setup state in this process (created on first use). */
  setupOf(callId: string): Setup;
  /** The call's setup is over (answered or ended): its state goes once no 2xx can come. */
  release(callId: string): void;
  /** Sends the leg's INVITE in a client transaction with the branch its row recorded. */
  invite(dialog: Dialog | NewDialog, request: SipRequest, events: ClientTransactionEvents): void;
  /** Sends the ACK of a leg's 2xx, kept for its retransmissions. */
  ack(dialog: Dialog, ack: SipRequest): void;
  /** A retransmitted 2xx of a leg already ACKed: the same ACK again; false when none was sent. */
  ackAgain(callId: string, leg: DialogLeg): boolean;
  /**
   * Ends one leg: marks it terminated and, after commit, CANCELs its pending INVITE or sends
   * its BYE (after the ACK its 2xx still waits for, refusing the phone's offer). The trunk's
   * INVITE of an inbound call not answered yet gets the final response `status` (480 unless
   * named).
   */
  close(tx: Tx, callId: string, leg: DialogLeg, status?: number): Promise<void>;
  /** What `close` does once the caller's own statement terminated the leg (`row`, as it was). */
  closed(tx: Tx, row: Dialog & { previous_state: DialogState }, status?: number): void;
  closeAll(tx: Tx, callId: string, status?: number): Promise<void>;
  /** A 2xx for a leg already given up (its CANCEL crossed the answer): ACK it, then BYE. */
  dropLateAnswer(row: Dialog, response: SipResponse): void;
  /**
   * A leg's 2xx to the INVITE we sent: locks the call and reads its status, confirms the leg's
   * dialog and ACKs it after commit, and reads the other leg (`confirmDialog`); `answered` is
   * undefined when the leg was given up meanwhile (the late answer is ACKed and BYEd instead).
   */
  confirmAnswer(
    tx: Tx,
    callId: string,
    leg: DialogLeg,
    response: SipResponse,
  ): Promise<{ callStatus: string | undefined; answered: Answered | undefined }>;
  clear(): void;
}

/**
 * The legs of the calls this process sets up, on the network: their INVITE transactions, the
 * ACKs of their 2xx, and how a leg is ended (CANCEL before the answer, BYE after) from its row,
 * by whichever process holds it.
 */
export function createSipLegs(options: {
  endpoint: SipEndpoint;
  /** The address our Via says. */
  owner: string;
  /** This process's id: a pending INVITE of ours is CANCELled through its own transaction. */
  instance: string;
  /** Our Contact over a leg's transport. */
  contact(transport: SipTransportName): NameAddress[];
  /** The final response to the trunk's INVITE of an inbound call, from its row. */
  refuseServerInvite(row: Dialog, status: number): void;
  /** The call's media session is released when a leg closes (the call is over). */
  media: MediaRelay;
  logger: Logger;
}): SipLegs {
  const { endpoint, owner, instance, contact, logger } = options;
  const setups = new Map<string, Setup>();
  const quietly: ClientTransactionEvents = {
    onResponse: () => undefined,
    onFailure: () => undefined,
  };

  const send = (request: SipRequest, flow: SipFlow) => {
    if (!endpoint.transport.send(request, flow)) {
      logger.debug({ method: request.method }, "sip: no connection to the leg");
    }
  };
  const setupOf = (callId: string): Setup => {
    let setup = setups.get(callId);
    if (!setup) {
      setup = {
        invites: {},
        acks: {},
        answered: new Set(),
        challenges: 0,
        phoneMedia: { queue: Promise.resolve(), given: undefined, answered: false },
      };
      setups.set(callId, setup);
    }
    return setup;
  };
  const release = (callId: string) => {
    setTimeout(() => setups.delete(callId), setupLingerMs).unref();
  };
  const ack = (dialog: Dialog, request: SipRequest) => {
    const flow = flowOf(dialog);
    setupOf(dialog.call_id).acks[dialog.leg] = { ack: request, flow };
    send(request, flow);
  };
  const bye = (dialog: Dialog, cseq: number) =>
    endpoint.client.send(
      inDialogRequest(dialog, "BYE", cseq, { contact: contact(dialog.flow_transport) }),
      flowOf(dialog),
      quietly,
    );

  const close = async (tx: Tx, callId: string, leg: DialogLeg, status = 480) => {
    const row = await terminateDialog(tx.client, callId, leg);
    if (row) closed(tx, row, status);
  };
  const closed = (tx: Tx, row: Dialog & { previous_state: DialogState }, status = 480) => {
    const callId = row.call_id;
    const leg = row.leg;
    tx.afterCommit(() => {
      release(callId);
      options.media
        .release(callId)
        .catch((error: unknown) =>
          logger.warn({ err: error, callId }, "sip: the RTP relay kept the call's session"),
        );
      if (row.server_invite && row.previous_state === "calling") {
        options.refuseServerInvite(row, status);
        return;
      }
      if (row.previous_state === "calling") {
        const pending = setups.get(callId)?.invites[leg];
        if (pending && row.owner_instance === instance) {
          pending.cancel();
          return;
        }
        const cancel = cancelOf(row);
        endpoint.client.send(cancel.request, flowOf(row), quietly, {
          branch: cancel.branch,
          sentBy: cancel.sentBy,
        });
        return;
      }
      if (!row.acked && !row.server_invite) {
        const refusal = row.remote_sdp ? refusingAnswer(row.remote_sdp) : undefined;
        ack(row, ackFor2xx(row, owner, refusal));
      }
      bye(row, row.local_cseq);
    });
  };

  const dropLateAnswer = (row: Dialog, response: SipResponse) => {
    const remote = answerOf(response);
    const answered: Dialog = {
      ...row,
      remote_tag: remote.tag,
      remote_target: remote.target,
      route_set: remote.routeSet,
    };
    // The phone's 2xx carries an offer when its INVITE had none (an outbound call's phone).
    const refusal =
      row.leg === "phone" && !row.remote_sdp && response.content
        ? refusingAnswer(response.content)
        : undefined;
    ack(answered, ackFor2xx(answered, owner, refusal));
    bye(answered, row.local_cseq + 1);
  };

  return {
    setupOf,
    release,
    invite(dialog, request, events) {
      const flow: SipFlow = {
        transport: dialog.flow_transport,
        address: dialog.flow_address,
        port: dialog.flow_port,
      };
      setupOf(dialog.call_id).invites[dialog.leg] = endpoint.client.send(request, flow, events, {
        branch: dialog.invite_branch,
      });
    },
    ack,
    ackAgain(callId, leg) {
      const sent = setups.get(callId)?.acks[leg];
      if (sent) send(sent.ack, sent.flow);
      return sent !== undefined;
    },
    close,
    closed,
    async closeAll(tx, callId, status) {
      for (const leg of legs) await close(tx, callId, leg, status);
    },
    dropLateAnswer,
    async confirmAnswer(tx, callId, leg, response) {
      const outcome = await confirmDialog(tx.client, callId, leg, {
        ...answerOf(response),
        acked: true,
      });
      const { answered } = outcome;
      if (!answered) {
        const [row] = (await dialogsOf(tx.client, callId)).filter((d) => d.leg === leg);
        if (row) tx.afterCommit(() => dropLateAnswer(row, response));
        return outcome;
      }
      const answerAck = ackFor2xx(answered.confirmed, owner);
      tx.afterCommit(() => ack(answered.confirmed, answerAck));
      return outcome;
    },
    clear() {
      setups.clear();
    },
  };
}
