/**
 * The guest-side prelude, run in every new isolate before the user's code. It captures JSON.parse and
 * stringify before the user can replace them, installs a console that hands each line to the host as it
 * is written (hostLog: the sandbox process sends it on at once, so lines written before a timeout or a
 * crash are kept), installs `qnLib` for versions that have it, removes the few built-ins that
 * reach outside one call (SharedArrayBuffer, Atomics, WebAssembly, FinalizationRegistry, WeakRef), and returns
 * `{ bind(main) → run, settle }`.
 *
 * `run(call, dataText, metaJson, parsed)` answers one string:
 *   "S" (skip) | "V" <result JSON> | "E" <error JSON>
 *   | "P" (the batch itself, unread: the host delivers the JSON text it passed in)
 *   | "Q" <metadata JSON> (the stream object itself, its batch unread: the host builds
 *     `{"data":<its JSON text>,"metadata":<metadata JSON>}`, which is what stringifying it would give)
 *   | "L" <length> (the result's JSON is longer than maxResult: the host fails the call with RESULT_TOO_LARGE)
 *   | "A" (main returned a promise: the same string comes later through hostFinish(call, string)).
 * A final answer starts with "R" when the call parsed a batch: the host sends this filter's next
 * batch only when it is read (see below) while its calls do not read it.
 *
 * The batch arrives as JSON text and is parsed lazily: `data` / `stream.data` is a Proxy over an empty
 * array that, on the first operation of any kind (a read, a write, a key listing; Array.isArray sees
 * through it), parses the text into that array and from then on forwards every operation to it. A
 * filter that decides on metadata alone never pays for parsing the batch, and one that returns it
 * untouched (the "P"/"Q" pass-through above) pays for neither that nor a stringify. The Proxy keeps its
 * own text, so a batch kept in a global from an earlier call still reads as that call's blocks.
 * The text may also stay in the host (dataText null): the first operation then asks the host for it
 * (hostBatch(call), answered synchronously), so a filter that never reads its batches never has them
 * copied into its process. The host keeps such a text until the filter's next call.
 * `parsed` (for a filter whose calls read their batches): the text is parsed before main, into a plain
 * array, and the call counts as reading it. Every operation on the Proxy goes through its handler even
 * once filled (~1.2 µs a call of 10 blocks that main iterates), which such a filter would pay for nothing.
 *
 * Helpers: `qnLib.<name>(...)` sends its arguments to the host (hostHelper) and returns a promise the
 * host settles through `settle(hid, ok, text)`. With snapshots, qnContainsListItems and
 * qnContainsAddressBookItems answer from a Set kept here per key: each call of main asks the host once
 * per key for the key's version (itemsSnapshot), and receives the items only when they changed.
 * Address books compare addresses case-insensitively; lists compare items exactly.
 */
export const BOOTSTRAP_SOURCE = `(function (hostHelper, hostFinish, hostLog, hostBatch, helperNames, version, maxLines, maxChars, maxTotal, snapshots, maxResult) {
  "use strict";
  var parse = JSON.parse, stringify = JSON.stringify, isArray = Array.isArray;
  var ProxyCtor = Proxy, PromiseCtor = Promise, SetCtor = Set, ErrorCtor = Error, RangeErrorCtor = RangeError;
  var create = Object.create, keys = Object.keys, freeze = Object.freeze, setPrototypeOf = Object.setPrototypeOf;
  var objectProto = Object.prototype, arrayProto = Array.prototype, StringCtor = String;
  // Methods the user's code could replace on their prototypes, called as they are now (the console's
  // bounds and the answer to the host must not depend on what the code does to Array, String or Promise).
  var uncurry = Function.prototype.bind.bind(Function.prototype.call);
  var sliceText = uncurry(String.prototype.slice), promiseThen = uncurry(Promise.prototype.then);
  var promiseResolve = uncurry(Promise.resolve);
  delete globalThis.SharedArrayBuffer;
  delete globalThis.Atomics;
  delete globalThis.WebAssembly;
  // A FinalizationRegistry's callbacks run when V8 collects, outside any call and its time limit (a
  // loop there hangs the sandbox for every account); WeakRef lets code watch collections across calls.
  delete globalThis.FinalizationRegistry;
  delete globalThis.WeakRef;
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
  // Whether the current call parsed a batch (its own, or one kept from an earlier call).
  var read = false;
  function fill(handler) {
    if (handler.filled) return;
    var text = handler.text === null ? hostBatch(handler.call) : handler.text;
    if (typeof text !== "string") throw new ErrorCtor("this batch was not read during the call that received it, nor the next one, and is no longer available: read what you keep during its own call");
    handler.filled = true;
    handler.text = null;
    read = true;
    var items = parse(text), target = handler.target;
    for (var i = 0; i < items.length; i++) target[i] = items[i];
    // Filled: without traps, V8 forwards every operation to the array itself (no call into this code).
    setPrototypeOf(handler, null);
  }
  function lazyBatch(text, call) {
    var handler = create(traps);
    handler.text = text;
    handler.call = call;
    handler.filled = false;
    handler.target = [];
    return { value: new ProxyCtor(handler.target, handler), handler: handler };
  }
  // Pass-through is only exact while nothing changes how the batch would be stringified.
  function plainJson() {
    return objectProto.toJSON === undefined && arrayProto.toJSON === undefined;
  }
  var strict = version >= 5, streamObject = version >= 3, asyncAllowed = version >= 4;
  var current = null, currentStream = null, currentCall = 0;
  // This call's lines kept, lines dropped, and characters kept (cut markers not counted).
  var logged = 0, dropped = 0, kept = 0;
  function text(v) {
    if (typeof v === "string") return v;
    try { var s = stringify(v); return s === undefined ? StringCtor(v) : s; } catch (e) { return StringCtor(v); }
  }
  function logger(level) {
    return function () {
      if (logged >= maxLines || kept >= maxTotal) { dropped++; return; }
      // Joined by concatenation, so m is a string primitive whatever the arguments' text() answered.
      var m = "";
      for (var i = 0; i < arguments.length; i++) m += (i > 0 ? " " : "") + text(arguments[i]);
      // A line is cut to the line limit, or to what is left of the call's, saying how much was cut.
      var room = maxTotal - kept < maxChars ? maxTotal - kept : maxChars;
      if (m.length > room) m = sliceText(m, 0, room) + "… [" + (m.length - room) + " more characters]";
      kept += m.length > room ? room : m.length;
      logged++;
      hostLog(currentCall, level, m);
    };
  }
  globalThis.console = freeze({
    log: logger("INFO"), info: logger("INFO"), debug: logger("INFO"), trace: logger("INFO"),
    warn: logger("WARNING"), error: logger("ERROR")
  });
  var waits = create(null), nextHid = 0;
  function callHost(name, args) {
    return new PromiseCtor(function (resolve, reject) {
      var hid = ++nextHid;
      waits[hid] = [resolve, reject];
      // A refusal by the host (too many waiting, arguments too long) rejects with its message alone: the
      // host's error carried the service's stack, its files and lines.
      try { hostHelper(currentCall, hid, name, stringify(args)); }
      catch (e) { delete waits[hid]; reject(new ErrorCtor(e && typeof e === "object" ? StringCtor(e.message) : StringCtor(e))); }
    });
  }
  function settleHelper(hid, ok, body) {
    var w = waits[hid];
    if (!w) return;
    delete waits[hid];
    if (ok) w[0](parse(body)); else w[1](new ErrorCtor(body));
  }
  // Per key: { version, set }; "checked" holds the keys whose version was asked for in this call.
  var lists = create(null), books = create(null), checked = create(null);
  function snapshot(cache, tag, key, lower) {
    var entry = cache[key];
    if (entry && checked[tag + key]) return PromiseCtor.resolve(entry.set);
    return callHost("itemsSnapshot", [key, entry ? entry.version : null]).then(function (r) {
      if (r.items !== null || !entry) {
        var set = new SetCtor(), items = r.items || [];
        for (var i = 0; i < items.length; i++) set.add(lower ? String(items[i]).toLowerCase() : items[i]);
        entry = cache[key] = { version: r.version, set: set };
      } else entry.version = r.version;
      checked[tag + key] = true;
      return entry.set;
    });
  }
  function strings(v) {
    if (!isArray(v)) return false;
    for (var i = 0; i < v.length; i++) if (typeof v[i] !== "string") return false;
    return true;
  }
  function contains(name, cache, tag, lower) {
    return function (key, items) {
      if (arguments.length < 2) return PromiseCtor.reject(new ErrorCtor("qnLib." + name + " expects 2 argument(s), got " + arguments.length));
      if (typeof key !== "string") return PromiseCtor.reject(new ErrorCtor("qnLib." + name + ": argument 1 must be a string"));
      if (!strings(items)) return PromiseCtor.reject(new ErrorCtor("qnLib." + name + ": argument 2 must be an array of strings"));
      var wanted = [];
      for (var i = 0; i < items.length; i++) wanted[i] = lower ? items[i].toLowerCase() : items[i];
      return snapshot(cache, tag, key, lower).then(function (set) {
        var out = [];
        for (var i = 0; i < wanted.length; i++) out[i] = set.has(wanted[i]);
        return out;
      });
    };
  }
  if (asyncAllowed) {
    var lib = {};
    helperNames.forEach(function (name) {
      lib[name] = function () {
        var args = [];
        for (var i = 0; i < arguments.length; i++) args[i] = arguments[i];
        return callHost(name, args);
      };
    });
    if (snapshots) {
      lib.qnContainsListItems = contains("qnContainsListItems", lists, "l:", false);
      lib.qnContainsAddressBookItems = contains("qnContainsAddressBookItems", books, "b:", true);
    }
    globalThis.qnLib = freeze(lib);
  }
  // Ends the call's logs: a closing WARNING counts the lines past the limit.
  function endLogs() {
    if (dropped > 0) hostLog(currentCall, "WARNING", dropped + " more log lines were dropped (limit " + maxLines + " lines and " + maxTotal + " characters per call)");
    logged = 0; dropped = 0; kept = 0;
  }
  var MEMORY_ERRORS = { "Maximum call stack size exceeded": "the stack limit (too deep recursion)",
    "Invalid string length": "a size limit: string too long", "Invalid array length": "a size limit: array too long",
    "Array buffer allocation failed": "its memory limit" };
  function failure(kind, e) {
    endLogs();
    if (e instanceof RangeErrorCtor && MEMORY_ERRORS[e.message]) {
      return "E" + stringify({ kind: "MEMORY", message: "filter exceeded " + MEMORY_ERRORS[e.message], stack: "" });
    }
    var message = e && typeof e === "object" && "message" in e ? StringCtor(e.name || "Error") + ": " + StringCtor(e.message) : "Uncaught " + text(e);
    var stack = e && typeof e === "object" && typeof e.stack === "string" ? e.stack : "";
    return "E" + stringify({ kind: kind, message: message, stack: stack });
  }
  function settle(v) {
    var out = outcome(v);
    current = currentStream = null;
    return read ? "R" + out : out;
  }
  function outcome(v) {
    var batch = current, stream = currentStream;
    endLogs();
    if (v === null || (v === undefined && !strict)) return "S";
    if (batch && batch.handler && !batch.handler.filled && plainJson()) {
      if (v === batch.value) return "P";
      if (v === stream && stream.data === batch.value) {
        var k = keys(stream);
        if (k.length === 2 && k[0] === "data" && k[1] === "metadata") {
          var m;
          try { m = stringify(stream.metadata); } catch (e) { return failure("RESULT_NOT_SERIALIZABLE", e); }
          if (m !== undefined) return "Q" + m;
        }
      }
    }
    if (v === undefined) return "E" + stringify({ kind: "RESULT_NOT_SERIALIZABLE", message: "main returned undefined: return null to skip a batch", stack: "" });
    var s;
    try { s = stringify(v); } catch (e) { return failure("RESULT_NOT_SERIALIZABLE", e); }
    if (s === undefined) return "E" + stringify({ kind: "RESULT_NOT_SERIALIZABLE", message: "main returned a " + typeof v + ", which has no JSON form", stack: "" });
    // Longer than the limit in UTF-16 units is longer in UTF-8 bytes: refused here, never copied out.
    if (maxResult > 0 && s.length > maxResult) return "L" + s.length;
    return "V" + s;
  }
  function reject(e) {
    current = currentStream = null;
    var out = failure("RUNTIME", e);
    return read ? "R" + out : out;
  }
  function bind(main) {
    // dataText: the batch's JSON text (a small one boxed in an array, see BOXED_MAX_CHARS), or null when the
    // host keeps it (always an array then); an array is parsed on first use, anything else (only a
    // caller's mistake) at once.
    return function run(call, dataText, metaJson, parsed) {
      if (dataText !== null && typeof dataText !== "string") dataText = dataText[0];
      currentCall = call;
      checked = create(null);
      read = false;
      var result, promised = false;
      try {
        if (dataText === null || (!parsed && dataText.charCodeAt(0) === 0x5b)) current = lazyBatch(dataText, call);
        else {
          read = true;
          current = { value: parse(dataText), handler: null };
        }
        var metadata = parse(metaJson);
        if (streamObject) result = main(currentStream = { data: current.value, metadata: metadata });
        else if (version === 2) result = main(current.value, metadata);
        else result = main(current.value);
        // (Asking the untouched batch for "then" would parse it; it is an array, never a promise.)
        promised = result !== null && typeof result === "object" && result !== current.value && typeof result.then === "function";
      } catch (e) { return reject(e); }
      if (!promised) return settle(result);
      if (!asyncAllowed) {
        current = currentStream = null;
        endLogs();
        return "E" + stringify({ kind: "RUNTIME", message: "async main needs filter version V4 or later", stack: "" });
      }
      // The answer is sent from these reactions, never from a promise derived from the user's (whose
      // constructor, species or then the code may have made its own): only settle and reject write it.
      promiseThen(promiseResolve(PromiseCtor, result),
        function (v) { hostFinish(call, settle(v)); }, function (e) { hostFinish(call, reject(e)); });
      return "A";
    };
  }
  return { bind: bind, settle: settleHelper };
})`;
