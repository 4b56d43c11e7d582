/** Types of file-digests.mjs (plain JavaScript: server/start.mjs uses it before TypeScript can be compiled). */
export declare const contentsDigest: (contents: Uint8Array | string) => string;
export declare function fileDigests(rootDir: string, files: string[]): string[];
