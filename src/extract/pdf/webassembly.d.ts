/**
 * The part of the WebAssembly JavaScript API the PDF engine uses. Node provides the global, but
 * its types live in TypeScript's DOM library, which this project does not load.
 */
declare namespace WebAssembly {
  class Module {
    private constructor();
  }
  class Instance {
    private constructor();
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    private constructor();
    readonly buffer: ArrayBuffer;
  }
  class RuntimeError extends Error {}
  type Imports = Record<string, Record<string, unknown>>;
  function compile(bytes: ArrayBufferView | ArrayBuffer): Promise<Module>;
  function instantiate(module: Module, imports?: Imports): Promise<Instance>;
}
