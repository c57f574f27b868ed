/** The tests verify records with the same function the agent smoke uses (API.md's recipe). */
export { verifySignedRecord as verifyRecord } from "@switchboard/kit";
