import { describe, expect, it } from "vitest";
import { sandboxBehaviour } from "../src/carrier/sandbox-outcomes.js";
import { recognizeKeyword } from "../src/consents/keywords.js";
import { canonicalContent, sha256Hex } from "../src/templates/signature.js";
import { parseTemplateBody, renderTemplate } from "../src/templates/variables.js";

describe("template variables", () => {
  it("lists variables in order of first use", () => {
    expect(parseTemplateBody("Hi {{name}}, {{ code }} is your code, {{name}}.")).toEqual({
      variables: ["name", "code"],
    });
    expect(parseTemplateBody("No variables { here }")).toEqual({ variables: [] });
  });

  it("refuses malformed placeholders", () => {
    expect(parseTemplateBody("Hi {{first name}}")).toHaveProperty("error");
    expect(parseTemplateBody("Hi {{1st}}")).toHaveProperty("error");
    expect(parseTemplateBody("Hi {{name")).toHaveProperty("error");
    expect(parseTemplateBody("Hi {{}}")).toHaveProperty("error");
  });

  it("renders every variable and reports missing and unknown ones", () => {
    const body = "Hi {{name}}, code {{code}}";
    expect(renderTemplate(body, ["name", "code"], { name: "Ada", code: "42" })).toEqual({
      body: "Hi Ada, code 42",
    });
    expect(renderTemplate(body, ["name", "code"], { name: "Ada", nmae: "x" })).toEqual({
      missing: ["code"],
      unknown: ["nmae"],
    });
    // A value that looks like a placeholder is inserted literally, not rendered again.
    expect(renderTemplate("{{a}}{{b}}", ["a", "b"], { a: "{{b}}", b: "!" })).toEqual({
      body: "{{b}}!",
    });
  });
});

describe("keywords", () => {
  it.each([
    ["STOP", "stop", "opt-out"],
    [" stop ", "stop", "opt-out"],
    ["Stop.", "stop", "opt-out"],
    ["STOPALL", "stopall", "opt-out"],
    ["unsubscribe", "unsubscribe", "opt-out"],
    ["CANCEL", "cancel", "opt-out"],
    ["End", "end", "opt-out"],
    ["QUIT", "quit", "opt-out"],
    ["START", "start", "opt-in"],
    ["unstop", "unstop", "opt-in"],
    ["HELP", "help", "help"],
  ])("%j is %s (%s)", (body, keyword, action) => {
    expect(recognizeKeyword(body)).toEqual({ keyword, action });
  });

  it("ignores keywords inside a sentence", () => {
    expect(recognizeKeyword("please stop")).toBeUndefined();
    expect(recognizeKeyword("STOP IT")).toBeUndefined();
    expect(recognizeKeyword("hello")).toBeUndefined();
  });
});

describe("sandbox outcomes", () => {
  it.each([
    ["+15550200000", "delivered"],
    ["+15550201231", "undelivered"],
    ["+15550209992", "rejected"],
    ["+15550200003", "not-rcs-capable"],
    ["+15550200004", "congested"],
    ["+15550200005", "answer-lost-once"],
    ["+15550200006", "throttled-once"],
    ["+15550200009", "delivered"],
    ["+14155550101", "delivered"],
  ])("%s → %s", (to, behaviour) => {
    expect(sandboxBehaviour(to)).toBe(behaviour);
  });
});

describe("template content", () => {
  it("is RFC 8785 canonical JSON, keys sorted, hashed as UTF-8", () => {
    const canonical = canonicalContent({
      name: "otp",
      version: 2,
      channels: ["sms", "rcs"],
      body: "Code {{c}} ✓",
    });
    expect(canonical).toBe(
      '{"body":"Code {{c}} ✓","channels":["sms","rcs"],"name":"otp","version":2}',
    );
    expect(sha256Hex(canonical)).toMatch(/^[0-9a-f]{64}$/);
  });
});
