export {
  createRecordPath,
  recordStage,
  replyCommitMiddleware,
  type RecordPath,
  type RecordPathOptions,
} from "./record-path.js";
export { RecordRelay } from "./record-relay.js";
export { ReplyCommitter, type ReplyWrites } from "./reply-committer.js";
export { usageKeySource } from "./usage-jwks.js";
