import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The documentation stays inside the repository and stays short where a newcomer starts: every link in a
 * markdown file leads to a file (and heading) of this repository or to a web address, and no README is
 * longer than a newcomer reads in five minutes.
 */
const root = path.resolve(import.meta.dirname, "../..");

/** The longest a README.md may be, in lines. */
const README_MAX_LINES = 200;

/** Folders that hold no documentation of ours: installed, built, generated at run time. */
const SKIPPED = new Set(["node_modules", "dist", "dist-server", "test-results"]);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith(".") || SKIPPED.has(entry.name)) return [];
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith(".md") ? [full] : [];
  });
}

/** Link targets of a markdown text: inline links and images, and reference definitions; code is not read. */
function linkTargets(text: string): string[] {
  const prose = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/(`+)[\s\S]*?\1/g, "");
  const targets: string[] = [];
  for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]);
  for (const match of prose.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)) targets.push(match[1]);
  return targets;
}

/** The anchors GitHub gives a markdown file's headings: lower case, punctuation dropped, spaces to hyphens. */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const prose = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const match of prose.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = match[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/ /g, "-");
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

const WEB = /^(https?|mailto):/i;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** What is wrong with each link of a markdown file (none: an empty list), within the repository at `repo`. */
function brokenLinks(file: string, repo: string): string[] {
  const text = readFileSync(file, "utf8");
  const where = path.relative(repo, file).split(path.sep).join("/");
  const problems: string[] = [];
  for (const target of linkTargets(text)) {
    if (WEB.test(target)) continue;
    if (SCHEME.test(target)) {
      problems.push(`${where}: ${target}: not a web address or a file of the repository`);
      continue;
    }
    const [rawPath, anchor] = target.split("#", 2) as [string, string | undefined];
    if (rawPath.startsWith("/")) {
      problems.push(`${where}: ${target}: an absolute path; link relative to the file`);
      continue;
    }
    const resolved = rawPath === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(rawPath));
    if (resolved !== repo && !resolved.startsWith(repo + path.sep)) {
      problems.push(`${where}: ${target}: points outside the repository`);
      continue;
    }
    if (!existsSync(resolved)) {
      problems.push(`${where}: ${target}: no such file`);
      continue;
    }
    if (anchor && resolved.endsWith(".md") && statSync(resolved).isFile()) {
      if (!headingAnchors(readFileSync(resolved, "utf8")).has(anchor.toLowerCase()))
        problems.push(`${where}: ${target}: no heading #${anchor} in ${path.relative(repo, resolved)}`);
    }
  }
  return problems;
}

const lineCount = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

function overlongReadmes(files: string[], repo: string): string[] {
  return files
    .filter((file) => path.basename(file) === "README.md")
    .map((file) => ({ file, lines: lineCount(readFileSync(file, "utf8")) }))
    .filter(({ lines }) => lines > README_MAX_LINES)
    .map(({ file, lines }) => `${path.relative(repo, file)}: ${lines} lines (at most ${README_MAX_LINES})`);
}

/** Text files of the repository where a path outside it could be written down: docs, sources, scripts. */
function textFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name) || entry.name === ".git" || entry.name === ".data") return [];
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return textFiles(full);
    return /\.(md|ts|tsx|mts|mjs|js|json|graphql|sh)$|^run$/.test(entry.name) ? [full] : [];
  });
}

/** A path that names the workspace around the repository: the design notes beside it, or an absolute path. */
const OUTSIDE_PATH = /(?:^|[\s`'"(])(?:\.\.\/)+shared\/|\/work\/(?:shared|wt|main)\//;

describe("the documentation", () => {
  const files = markdownFiles(root);

  it("finds the repository's markdown files", () => {
    expect(files.map((file) => path.relative(root, file))).toEqual(
      expect.arrayContaining(["README.md", path.join("docs", "architecture.md"), path.join("screens", "README.md")]),
    );
  });

  it("links only to files and headings of this repository, or to web addresses", () => {
    expect(files.flatMap((file) => brokenLinks(file, root))).toEqual([]);
  });

  it("names no path outside the repository, in docs or in code comments", () => {
    const self = path.join(root, "tests", "contract", "docs.test.ts");
    const found = textFiles(root)
      .filter((file) => file !== self)
      .flatMap((file) =>
        readFileSync(file, "utf8")
          .split("\n")
          .flatMap((line, i) =>
            OUTSIDE_PATH.test(line) ? [`${path.relative(root, file)}:${i + 1}: ${line.trim()}`] : [],
          ),
      );
    expect(found).toEqual([]);
  });

  it("keeps every README.md within 200 lines", () => {
    expect(overlongReadmes(files, root)).toEqual([]);
  });

  describe("fails on what it is for (a repository made here)", () => {
    const repo = mkdtempSync(path.join(tmpdir(), "nodeplane-docs-"));
    afterAll(() => rmSync(repo, { recursive: true, force: true }));
    mkdirSync(path.join(repo, "docs"));
    writeFileSync(path.join(repo, "docs", "guide.md"), "# Guide\n\n## Step one — start\n\ntext\n");
    const readme = path.join(repo, "README.md");
    writeFileSync(
      readme,
      [
        "# Test",
        "[fine](docs/guide.md) [fine anchor](docs/guide.md#step-one--start) [web](https://example.com)",
        "[here](#test) ![picture](docs/guide.md)",
        "[outside](../shared/ARCHITECTURE.md) [absolute](/work/shared/SPEC.md) [file](file:///etc/passwd)",
        "[missing](docs/missing.md) [bad anchor](docs/guide.md#step-two)",
        "`[in code](../ignored.md)`",
        "```",
        "[in a block](../ignored.md)",
        "```",
        "[ref]: docs/nothing-here.md",
        ...Array.from({ length: 200 }, () => "line"),
        "",
      ].join("\n"),
    );

    it("names each broken link with its file and reason", () => {
      expect(brokenLinks(readme, repo)).toEqual([
        "README.md: ../shared/ARCHITECTURE.md: points outside the repository",
        "README.md: /work/shared/SPEC.md: an absolute path; link relative to the file",
        "README.md: file:///etc/passwd: not a web address or a file of the repository",
        "README.md: docs/missing.md: no such file",
        `README.md: docs/guide.md#step-two: no heading #step-two in ${path.join("docs", "guide.md")}`,
        "README.md: docs/nothing-here.md: no such file",
      ]);
    });

    it("knows a path outside the repository when it sees one", () => {
      expect(OUTSIDE_PATH.test("Read `../shared/SPEC.md` first")).toBe(true);
      expect(OUTSIDE_PATH.test("// see /work/shared/ARCHITECTURE.md")).toBe(true);
      expect(OUTSIDE_PATH.test("the sandbox (`server/dataplane/sandbox/`) and shared/ state")).toBe(false);
    });

    it("names a README over 200 lines", () => {
      expect(overlongReadmes(markdownFiles(repo), repo)).toEqual(["README.md: 210 lines (at most 200)"]);
    });
  });
});
