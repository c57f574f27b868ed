import {
  InterceptingCall,
  status,
  type Interceptor,
  type Metadata,
  type StatusObject,
} from "@grpc/grpc-js";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type TextMapGetter,
  type TextMapSetter,
} from "@opentelemetry/api";
import { toGrpcError } from "../grpc-errors.js";
import { errorType, isServerFault, runInSpan, tracer } from "./spans.js";

/**
 * gRPC spans of our own, for every hop (gateway → service, service → service): a CLIENT span
 * per call whose context travels in the metadata (`traceparent`, through the registered
 * propagator), and a SERVER span per call continued from it. They are made here rather than by
 * instrumentation-grpc because they must also exist where nothing is preloaded (the embedded
 * mode, the in-process tests); the preload therefore leaves instrumentation-grpc off, so one
 * hop never gets two spans. Metadata values (idempotency keys, request ids) are not recorded.
 */
const metadataSetter: TextMapSetter<Metadata> = {
  set: (metadata, key, value) => metadata.set(key, value),
};

const metadataGetter: TextMapGetter<Metadata> = {
  keys: (metadata) => Object.keys(metadata.getMap()),
  get: (metadata, key) => {
    const values = metadata.get(key).filter((v): v is string => typeof v === "string");
    return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
  },
};

/** `/pkg.Service/Method` → span name `pkg.Service/Method` and the rpc.* attributes. */
function rpcOf(path: string) {
  const name = path.startsWith("/") ? path.slice(1) : path;
  const slash = name.lastIndexOf("/");
  return {
    name,
    attributes: {
      "rpc.system": "grpc",
      "rpc.service": name.slice(0, slash),
      "rpc.method": name.slice(slash + 1),
    },
  };
}

/**
 * Client side: one CLIENT span per unary call, injected into the outgoing metadata. A server
 * stream (a watch held open for the process's life) is no request's work: it gets none.
 */
export const traceClientInterceptor: Interceptor = (options, nextCall) => {
  if (options.method_definition.responseStream) return new InterceptingCall(nextCall(options));
  const { name, attributes } = rpcOf(options.method_definition.path);
  const span = tracer().startSpan(name, { kind: SpanKind.CLIENT, attributes });
  const callContext = trace.setSpan(context.active(), span);
  return new InterceptingCall(nextCall(options), {
    start(metadata, listener, next) {
      propagation.inject(callContext, metadata, metadataSetter);
      next(metadata, {
        onReceiveStatus(received: StatusObject, nextStatus: (s: StatusObject) => void) {
          span.setAttribute("rpc.grpc.status_code", received.code);
          if (received.code !== status.OK) {
            span.setAttribute("error.type", status[received.code] ?? String(received.code));
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end();
          nextStatus(received);
        },
      });
    },
  });
};

/** Server side: runs one unary call in a SERVER span continued from the caller's metadata. */
export function traceUnaryCall<T>(
  path: string,
  metadata: Metadata,
  run: () => Promise<T>,
): Promise<T> {
  const { name, attributes } = rpcOf(path);
  const parent = propagation.extract(ROOT_CONTEXT, metadata, metadataGetter);
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return runInSpan(span, parent, run, {
    ok: () => span.setAttribute("rpc.grpc.status_code", status.OK),
    failed: (error) => {
      span.setAttribute("rpc.grpc.status_code", toGrpcError(error).code ?? status.UNKNOWN);
      span.setAttribute("error.type", errorType(error));
      if (isServerFault(error)) span.setStatus({ code: SpanStatusCode.ERROR });
    },
  });
}
