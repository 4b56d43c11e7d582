/**
 * The guest-side prelude, evaluated in every fresh QuickJS context before the user's code. It captures
 * JSON.parse/stringify before the user can replace them, installs a console that records lines in
 * the guest (no host call per log line), installs `qnLib` for versions that have it, and returns a
 * `bind(main)` that yields the per-call entry point.
 *
 * The entry point returns one string (or a promise of one) so a call crosses the host boundary once:
 *   [ "L" <length> ":" <logs JSON> ] then "S" (skip) | "V" <result JSON> | "E" <error JSON>
 * Uncatchable conditions (interrupt, out of memory, stack overflow) are rethrown for the host to
 * classify, because the guest may be unable to allocate while handling them.
 */
export const BOOTSTRAP_SOURCE = `(function (hostCall, helperNames, version, maxLines, maxChars) {
  "use strict";
  var parse = JSON.parse, stringify = JSON.stringify, isArray = Array.isArray;
  var strict = version >= 5, streamObject = version >= 3, asyncAllowed = version >= 4;
  var logs = [], dropped = 0;
  function text(v) {
    if (typeof v === "string") return v;
    try { var s = stringify(v); return s === undefined ? String(v) : s; } catch (e) { return String(v); }
  }
  function logger(level) {
    return function () {
      if (logs.length >= maxLines) { dropped++; return; }
      var parts = [];
      for (var i = 0; i < arguments.length; i++) parts[parts.length] = text(arguments[i]);
      var m = parts.join(" ");
      if (m.length > maxChars) m = m.slice(0, maxChars) + "…";
      logs[logs.length] = [level, m];
    };
  }
  globalThis.console = Object.freeze({
    log: logger("INFO"), info: logger("INFO"), debug: logger("INFO"),
    warn: logger("WARNING"), error: logger("ERROR")
  });
  if (asyncAllowed) {
    var lib = {};
    helperNames.forEach(function (name) {
      lib[name] = function () {
        var args = [];
        for (var i = 0; i < arguments.length; i++) args[i] = arguments[i];
        return hostCall(name, stringify(args)).then(function (json) { return parse(json); });
      };
    });
    globalThis.qnLib = Object.freeze(lib);
  }
  function fatal(e) {
    return e instanceof InternalError && (e.message === "interrupted" || e.message === "out of memory" || e.message === "stack overflow");
  }
  function takeLogs() {
    if (dropped > 0) logs[logs.length] = ["WARNING", dropped + " more log lines were dropped (limit " + maxLines + " per call)"];
    var json = logs.length ? stringify(logs) : "";
    var out = json ? "L" + json.length + ":" + json : "";
    logs = []; dropped = 0;
    return out;
  }
  function failure(kind, e) {
    var message = e && typeof e === "object" && "message" in e ? String(e.name || "Error") + ": " + String(e.message) : "Uncaught " + text(e);
    var stack = e && typeof e === "object" && typeof e.stack === "string" ? e.stack : "";
    return takeLogs() + "E" + stringify({ kind: kind, message: message, stack: stack });
  }
  function settle(v) {
    if (v === null || (v === undefined && !strict)) return takeLogs() + "S";
    if (v === undefined) return takeLogs() + "E" + stringify({ kind: "RESULT_NOT_SERIALIZABLE", message: "main returned undefined: return null to skip a batch", stack: "" });
    var s;
    try { s = stringify(v); } catch (e) {
      if (fatal(e)) throw e;
      return failure("RESULT_NOT_SERIALIZABLE", e);
    }
    if (s === undefined) return takeLogs() + "E" + stringify({ kind: "RESULT_NOT_SERIALIZABLE", message: "main returned a " + typeof v + ", which has no JSON form", stack: "" });
    return takeLogs() + "V" + s;
  }
  function reject(e) {
    if (fatal(e)) throw e;
    return failure("RUNTIME", e);
  }
  return function bind(main) {
    return function run(dataJson, metaJson) {
      var result;
      try {
        var data = parse(dataJson), metadata = parse(metaJson);
        if (streamObject) result = main({ data: data, metadata: metadata });
        else if (version === 2) result = main(data, metadata);
        else result = main(data);
      } catch (e) { return reject(e); }
      if (result !== null && typeof result === "object" && typeof result.then === "function") {
        if (!asyncAllowed) {
          return takeLogs() + "E" + stringify({ kind: "RUNTIME", message: "async main needs filter version V4 or later", stack: "" });
        }
        return result.then(settle, reject);
      }
      return settle(result);
    };
  };
})`;
