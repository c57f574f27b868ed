export { RecordPublisher, type RecordPublisherStats, type RecordSink } from "./record-publisher.js";
export {
  busRecordSink,
  createRecordPath,
  recordMiddleware,
  recordStage,
  type RecordPath,
  type RecordPathOptions,
} from "./record-path.js";
export { startRecordPath, type RecordSettings, type StartedRecordPath } from "./record-bus.js";
export { usageKeySource } from "./usage-jwks.js";
