export { startTestSmsc } from "./smsc.js";
export { isSubmitFault, submitFaults, type SubmitFault } from "./faults.js";
export type { MoResult, SmscEvent, TestSmsc, TestSmscOptions } from "./api.js";
export {
  defaultErr,
  defaultOutcome,
  messageStates,
  statusName,
  type Outcome,
  type OutcomeContext,
  type OutcomeFunction,
  type Stat,
} from "./outcomes.js";
export { receiptDate, receiptFields, receiptText, type ReceiptFormat } from "./receipts.js";
export { addressOf, moFields, type MoRequest } from "./mo.js";
export { encodeGsm, encodeUcs2, isGsm, splitText, type DataCoding } from "./alphabet.js";
export {
  peakInWindow,
  type BindRecord,
  type Concat,
  type PduRecord,
  type ReceiptAttempt,
  type RefusedSubmit,
  type SubmitInfo,
  type SubmitRecord,
} from "./records.js";
