// The types of platform.js, for the test harness's TypeScript (testing/src/).
/** The platform package's name for this process, e.g. @wasmkeep/actor-linux-x64-gnu. */
export declare function platformPackage(): string;
/** The path of `file` in the installed platform package, or undefined when it is not installed. */
export declare function platformFile(file: string): string | undefined;
