/**
 * The guest-side prelude, evaluated in every fresh QuickJS context before the user's code. It captures
 * JSON.parse/stringify before the user can replace them, installs a console that records lines in
 * the guest (no host call per log line), installs `qnLib` for versions that have it, and returns a
 * `bind(main)` that yields the per-call entry point.
 *
 * The entry point returns one string (or a promise of one) so a call crosses the host boundary once:
 *   [ "L" <length> ":" <logs JSON> ] then "S" (skip) | "V" <result JSON> | "E" <error JSON>
 *   | "P" (the batch itself, unread: the host delivers the JSON text it passed in)
 *   | "Q" <metadata JSON> (the stream object itself, its batch unread: the host builds
 *     `{"data":<its JSON text>,"metadata":<metadata JSON>}`, which is what stringifying it would give)
 *
 * The batch reaches the guest lazily: `data` / `stream.data` is a Proxy over an empty array that, on
 * the first operation of any kind (a read, a write, a key listing; Array.isArray sees through it),
 * asks the host for the batch's JSON text (`hostData`, not reachable by user code), parses it into
 * that array and from then on forwards every operation to it. A filter that decides on metadata alone
 * never pays for copying or parsing the batch, and one that returns it untouched (the "P"/"Q"
 * pass-through above) pays for neither those nor a stringify. Filters see an ordinary array; a
 * touched batch (mutations included) is stringified like any other value. The host holds the text
 * only during the call, so when the call ends a batch still reachable from the filter's state (a
 * global that kept it) is filled then; QuickJS frees unreachable objects at once (reference
 * counting), so a WeakRef tells whether anything kept it, erring on the side of filling.
 * Uncatchable conditions (interrupt, out of memory, stack overflow) are rethrown for the host to
 * classify, because the guest may be unable to allocate while handling them.
 */
export const BOOTSTRAP_SOURCE = `(function (hostCall, hostData, helperNames, version, maxLines, maxChars) {
  "use strict";
  var parse = JSON.parse, stringify = JSON.stringify, isArray = Array.isArray;
  var ProxyCtor = Proxy, WeakRefCtor = WeakRef, create = Object.create, keys = Object.keys;
  var apply = Reflect.apply, deref = WeakRef.prototype.deref;
  var objectProto = Object.prototype, arrayProto = Array.prototype;
  // One trap per Proxy operation; each fills the target (once) and forwards. Each lazy batch's handler
  // inherits these (a chain without Object.prototype, so nothing the filter adds there is consulted).
  var traps = create(null);
  ["get", "set", "has", "deleteProperty", "defineProperty", "getOwnPropertyDescriptor", "ownKeys",
   "getPrototypeOf", "setPrototypeOf", "isExtensible", "preventExtensions"].forEach(function (name) {
    var forward = Reflect[name];
    traps[name] = function (target, a, b) {
      fill(this);
      return forward(target, a, b);
    };
  });
  function fill(handler) {
    if (!handler.pending) return;
    handler.pending = false;
    var items = parse(hostData()), target = handler.target;
    for (var i = 0; i < items.length; i++) target[i] = items[i];
  }
  function lazyBatch() {
    var handler = create(traps);
    handler.pending = true;
    handler.target = [];
    return { value: new ProxyCtor(handler.target, handler), handler: handler };
  }
  // Pass-through is only exact while nothing changes how the batch would be stringified.
  function plainJson() {
    return objectProto.toJSON === undefined && arrayProto.toJSON === undefined;
  }
  var current = null, currentStream = null, held;
  /** Ends the call's hold on its batch; fills it if the filter kept it (see above). */
  function release() {
    var batch = current;
    current = currentStream = null;
    if (!batch || !batch.handler || !batch.handler.pending) return;
    var handler = batch.handler, ref = new WeakRefCtor(batch.value);
    batch = null;
    if (apply(deref, ref, []) !== undefined) fill(handler);
  }
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
    var out = outcome(v);
    v = null;
    release();
    return out;
  }
  function outcome(v) {
    var batch = current, stream = currentStream;
    if (v === null || (v === undefined && !strict)) return takeLogs() + "S";
    if (batch && batch.handler && batch.handler.pending && plainJson()) {
      if (v === batch.value) return takeLogs() + "P";
      if (v === stream && stream.data === batch.value) {
        var k = keys(stream);
        if (k.length === 2 && k[0] === "data" && k[1] === "metadata") {
          var m;
          try { m = stringify(stream.metadata); } catch (e) {
            if (fatal(e)) throw e;
            return failure("RESULT_NOT_SERIALIZABLE", e);
          }
          if (m !== undefined) return takeLogs() + "Q" + m;
        }
      }
    }
    batch = stream = null;
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
    var out = failure("RUNTIME", e);
    e = null;
    release();
    return out;
  }
  /** The synchronous result, handed to settle with no variable but settle's own pointing at it. */
  function takeHeld() {
    var v = held;
    held = undefined;
    return v;
  }
  return function bind(main) {
    // dataJson: the batch's text when it is not an array (only a caller's mistake; parsed at once),
    // otherwise null and the batch is fetched from the host on first use.
    return function run(dataJson, metaJson) {
      var result;
      try {
        current = dataJson === null ? lazyBatch() : { value: parse(dataJson), handler: null };
        var metadata = parse(metaJson);
        if (streamObject) result = main(currentStream = { data: current.value, metadata: metadata });
        else if (version === 2) result = main(current.value, metadata);
        else result = main(current.value);
      } catch (e) { return reject(e); }
      // (Asking the untouched batch for "then" would fetch it; it is an array, never a promise.)
      if (result !== null && typeof result === "object" && result !== current.value && typeof result.then === "function") {
        if (!asyncAllowed) {
          result = null;
          release();
          return takeLogs() + "E" + stringify({ kind: "RUNTIME", message: "async main needs filter version V4 or later", stack: "" });
        }
        return result.then(settle, reject);
      }
      held = result;
      result = undefined;
      return settle(takeHeld());
    };
  };
})`;
