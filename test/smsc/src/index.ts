export { startTestSmsc } from "./smsc.js";
