import type { Logger } from "@switchboard/kit";
import smpp from "smpp";
import { PduConnection } from "./pdu-connection.js";
import type { SmppConfig } from "./smpp-settings.js";

/** The bind went away (or never came) before the request's response. */
export class BindLostError extends Error {
  override readonly name = "BindLostError";
  constructor(
    message: string,
    /**
     * The request was handed to the connection, so the SMSC may have taken it; unset, it never
     * left and the SMSC cannot hold it.
     */
    readonly sent: boolean,
    /** Set when the carrier is stopping: no new bind will come. */
    readonly final = false,
  ) {
    super(message);
  }
}

/** What the SMSC sends us: the status to answer it with, once its effect is committed. */
export type DeliverHandler = (pdu: smpp.PDU) => Promise<number>;

interface Pending {
  resolve(pdu: smpp.PDU): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * One transceiver bind to the SMSC, kept up for the life of the carrier: it binds, answers
 * `enquire_link` and sends its own every SMPP_ENQUIRE_LINK_MS (a silent SMSC counts as a lost
 * bind), and rebinds after a loss with exponential backoff and jitter. Requests wait for the
 * bind and for room in the window (SMPP_WINDOW outstanding PDUs); a request whose response has
 * not come when the bind goes, or within SMPP_RESPONSE_TIMEOUT_MS, fails with BindLostError
 * (a timeout also drops the bind: an SMSC that stops answering is not trusted with more). So
 * does a PDU from the SMSC that cannot be parsed: the connection is dropped at once.
 */
export class SmppBind {
  private session: PduConnection | undefined;
  private bound = false;
  private stopped = false;
  private failures = 0;
  private readonly pending = new Map<number, Pending>();
  /** Requests sent and not yet answered (or failed): a stop waits for them. */
  private readonly unanswered = new Set<Promise<smpp.PDU>>();
  private readonly boundWaiters: Array<() => void> = [];
  private readonly windowWaiters: Array<() => void> = [];
  private inFlight = 0;
  private keepalive: NodeJS.Timeout | undefined;
  private reconnect: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: SmppConfig,
    private readonly logger: Logger,
    private readonly onDeliver: DeliverHandler,
  ) {}

  get isBound(): boolean {
    return this.bound;
  }

  start(): void {
    this.connect();
  }

  /**
   * Sends one request on the bind and resolves with its response (whatever its status). Waits
   * for a bind until `deadline` (epoch ms), then fails with BindLostError as if it were lost.
   */
  async request(command: "submit_sm", fields: smpp.PDUFields, deadline: number): Promise<smpp.PDU> {
    await this.whenBound(deadline);
    await this.enterWindow();
    try {
      const session = this.session;
      if (this.stopped) throw new BindLostError("the carrier stopped", false, true);
      if (!session || !this.bound) throw new BindLostError("the bind was lost", false);
      const answer = this.send(session, new smpp.PDU(command, fields));
      this.unanswered.add(answer);
      try {
        return await answer;
      } finally {
        this.unanswered.delete(answer);
      }
    } finally {
      this.leaveWindow();
    }
  }

  /**
   * Takes no new request (those waiting fail `final`, never sent), waits for the answers of the
   * requests already sent (each at most SMPP_RESPONSE_TIMEOUT_MS: giving up on them would leave
   * their outcome unknown), then unbinds.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnect);
    clearInterval(this.keepalive);
    for (const wake of this.boundWaiters.splice(0)) wake();
    await Promise.allSettled([...this.unanswered]);
    const session = this.session;
    if (session && this.bound) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.send(session, new smpp.PDU("unbind")).catch(() => undefined),
        new Promise((resolve) => (timer = setTimeout(resolve, 1_000))),
      ]);
      clearTimeout(timer);
    }
    session?.destroy();
    this.lost("the carrier stopped", true);
  }

  private connect(): void {
    if (this.stopped) return;
    const { host, port, tls } = this.config;
    const session = new PduConnection({ host, port, tls });
    this.session = session;
    session.on("ready", () => this.bind(session));
    session.on("error", (error: Error) =>
      this.logger.warn({ err: { message: error.message }, host, port }, "smpp connection error"),
    );
    session.on("malformed", (error) =>
      this.logger.warn(
        { err: { message: error.message }, host, port },
        "the SMSC sent a PDU that cannot be parsed; rebinding",
      ),
    );
    session.on("close", () => this.closed(session));
    session.on("pdu", (pdu: smpp.PDU) => this.received(session, pdu));
  }

  private bind(session: PduConnection): void {
    const { systemId, password, systemType } = this.config;
    this.send(
      session,
      new smpp.PDU("bind_transceiver", {
        system_id: systemId,
        password,
        system_type: systemType,
        interface_version: 0x34,
      }),
    ).then(
      (response) => {
        if (response.command_status !== 0) {
          this.logger.error(
            { status: response.command_status, systemId },
            "the SMSC refused the bind",
          );
          session.destroy();
          return;
        }
        this.bound = true;
        this.failures = 0;
        this.logger.info({ host: this.config.host, systemId }, "smpp bound as transceiver");
        this.keepalive = setInterval(() => this.enquire(session), this.config.enquireLinkMs);
        for (const wake of this.boundWaiters.splice(0)) wake();
      },
      () => session.destroy(),
    );
  }

  private enquire(session: PduConnection): void {
    this.send(session, new smpp.PDU("enquire_link")).catch(() => session.destroy());
  }

  private received(session: PduConnection, pdu: smpp.PDU): void {
    if (pdu.isResponse()) {
      const waiting = this.pending.get(pdu.sequence_number);
      if (!waiting) return;
      this.pending.delete(pdu.sequence_number);
      clearTimeout(waiting.timer);
      waiting.resolve(pdu);
      return;
    }
    if (pdu.command === "enquire_link") {
      session.send(pdu.response());
    } else if (pdu.command === "unbind") {
      session.send(pdu.response());
      session.close();
    } else if (pdu.command === "deliver_sm" || pdu.command === "data_sm") {
      this.onDeliver(pdu).then(
        (status) => session.send(pdu.response({ command_status: status })),
        (error: unknown) => {
          this.logger.error({ err: error }, "an SMSC deliver_sm could not be handled");
          session.send(pdu.response({ command_status: smpp.ESME_RX_T_APPN }));
        },
      );
    } else {
      session.send(pdu.response({ command_status: smpp.errors.ESME_RINVCMDID ?? 0x03 }));
    }
  }

  private send(session: PduConnection, pdu: smpp.PDU): Promise<smpp.PDU> {
    return new Promise((resolve, reject) => {
      if (!session.send(pdu)) {
        reject(new BindLostError("the connection to the SMSC is not writable", false));
        return;
      }
      // After a stalled event loop, timers run before the socket is read: the answer may be
      // waiting in the socket. setImmediate runs after the reads, so only a real silence counts.
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (this.pending.get(pdu.sequence_number)?.timer !== timer) return;
            this.pending.delete(pdu.sequence_number);
            reject(new BindLostError(`no ${pdu.command}_resp within the response timeout`, true));
            this.logger.warn(
              { command: pdu.command },
              "the SMSC did not answer in time; rebinding",
            );
            session.destroy();
          }),
        this.config.responseTimeoutMs,
      );
      this.pending.set(pdu.sequence_number, { resolve, reject, timer });
    });
  }

  private closed(session: PduConnection): void {
    if (session !== this.session) return;
    const wasBound = this.bound;
    this.bound = false;
    clearInterval(this.keepalive);
    this.lost("the bind was lost");
    if (this.stopped) return;
    this.failures += 1;
    const ceiling = Math.min(
      this.config.bindRetryMaxMs,
      this.config.bindRetryMs * 2 ** Math.min(this.failures - 1, 20),
    );
    const delayMs = Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
    this.logger.warn({ wasBound, delayMs }, "smpp connection closed; binding again");
    this.reconnect = setTimeout(() => this.connect(), delayMs);
  }

  /** Every outstanding request fails: none of them will be answered on this connection. */
  private lost(reason: string, final = false): void {
    for (const [sequence, waiting] of this.pending) {
      clearTimeout(waiting.timer);
      waiting.reject(new BindLostError(reason, true, final));
      this.pending.delete(sequence);
    }
  }

  private whenBound(deadline: number): Promise<void> {
    if (this.stopped) return Promise.reject(new BindLostError("the carrier stopped", false, true));
    if (this.bound) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => {
          const index = this.boundWaiters.indexOf(wake);
          if (index >= 0) this.boundWaiters.splice(index, 1);
          reject(new BindLostError("no bind to the SMSC in time", false));
        },
        Math.max(0, deadline - Date.now()),
      );
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      this.boundWaiters.push(wake);
    });
  }

  private async enterWindow(): Promise<void> {
    while (this.inFlight >= this.config.window) {
      await new Promise<void>((resolve) => this.windowWaiters.push(resolve));
    }
    this.inFlight += 1;
  }

  private leaveWindow(): void {
    this.inFlight -= 1;
    this.windowWaiters.shift()?.();
  }
}
