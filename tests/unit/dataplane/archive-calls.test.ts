// Where the Archive add-on's state reads go (the served node's window as the follower saw it last, with a
// margin, and the fallback for blocks that left the window since), and which node answers mean "pruned".
import { expect, it } from "vitest";
import { archiveWay, EDGE_MARGIN_BLOCKS, stateNotKept } from "../../../server/dataplane/proxy/archive-calls.ts";

it("sends blocks below the window and its margin to the archive node, the rest it has to the served node first", () => {
  const below = 100;
  const replayed = 170;
  expect(archiveWay(0, below, replayed)).toBe("archive");
  expect(archiveWay(below - 1, below, replayed)).toBe("archive");
  expect(archiveWay(below, below, replayed)).toBe("archive");
  expect(archiveWay(below + EDGE_MARGIN_BLOCKS - 1, below, replayed)).toBe("archive");
  expect(archiveWay(below + EDGE_MARGIN_BLOCKS, below, replayed)).toBe("served-else-archive");
  expect(archiveWay(replayed, below, replayed)).toBe("served-else-archive");
  // Blocks the archive node has not replayed yet stay with the served node, margin or not.
  expect(archiveWay(replayed + 1, below, replayed)).toBe("served");
  expect(archiveWay(below + 2, below, below + 1)).toBe("served");
  expect(archiveWay(below + 1, below, below + 1)).toBe("archive");
});

it("tells a node's pruned-state error from its other answers", () => {
  const error = (message: string) => JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code: -32000, message } });
  expect(stateNotKept(error("BlockOutOfRangeError: block height is 120 but requested was 25"))).toBe(true);
  expect(stateNotKept(error("missing trie node 1b2c… (path ) state 0x… is not available"))).toBe(true);
  expect(stateNotKept(error("historical state 0xabc is not available"))).toBe(true);
  expect(stateNotKept(error("execution reverted"))).toBe(false);
  expect(stateNotKept(JSON.stringify({ jsonrpc: "2.0", id: 1, result: "0x1" }))).toBe(false);
  expect(stateNotKept('{"jsonrpc":"2.0","id":1,"result":"0x1","error"')).toBe(false);
});
