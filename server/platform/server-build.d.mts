/** Types of server-build.mjs (plain JavaScript: server/start.mjs runs it before TypeScript can be compiled). */
export declare const SERVER_BUILD_DIR: string;
export declare const SERVER_BUNDLE: string;
export declare function serverBuildStaleness(rootDir: string): string | null;
export declare function ensureServerBuilt(rootDir: string, log?: (line: string) => void): Promise<void>;
export declare const ENGINE_BUNDLE: string;
export declare function engineEntry(rootDir: string): string[];
export declare const SANDBOX_HOST_BUNDLE: string;
/** node's arguments that run the sandbox process (the lane goes after), and the files it starts from. */
export declare function sandboxHostLaunch(rootDir: string): { args: string[]; reads: string[] };
export declare const STAGED_BUILD_ENV: string;
/** `purpose` names the staging folder apart from the one ensureServerBuilt builds in (npm start runs from its own). */
export declare function stageServerBuild(rootDir: string, purpose?: string): Promise<string>;
