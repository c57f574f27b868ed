import type { Server } from "node:http";
import type { Socket } from "node:net";
import { DomainError, newId } from "@switchboard/kit";
import { PROBLEM_MEDIA_TYPE, toProblem } from "./problem.js";

const kindOf = (code: string | undefined) =>
  code === "HPE_HEADER_OVERFLOW"
    ? ("headers-too-large" as const)
    : code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? ("request-timeout" as const)
      : ("malformed-request" as const);

const detailOf = {
  "headers-too-large": "the request's header fields exceed the server's limit",
  "request-timeout": "the request was not received in time",
  "malformed-request": "the request is not valid HTTP/1.1",
} as const;

/**
 * Requests Node's HTTP parser refuses before express sees them (a malformed request line or
 * header, headers too large, a request not received in time) get problem+json too, with a
 * request id, and the connection is closed. Node's own answer is plain text.
 */
export function answerClientErrors(server: Server, errorsUrl: string): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const kind = kindOf(error.code);
    const requestId = newId("req");
    const problem = toProblem(new DomainError(kind, detailOf[kind]), { requestId, errorsUrl });
    const body = JSON.stringify(problem.body);
    const head = [
      `HTTP/1.1 ${problem.status} ${problem.body.title}`,
      `Content-Type: ${PROBLEM_MEDIA_TYPE}`,
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      "Connection: close",
    ];
    socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
  });
}
