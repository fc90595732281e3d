/** pdf.js ships no types for its worker module; this is the one entry point the pool thread uses. */
declare module 'pdfjs-dist/legacy/build/pdf.worker.mjs' {
  export const WorkerMessageHandler: {
    /** Starts pdf.js's parsing side on a Worker-like port, as a web worker's own script does. */
    initializeFromPort(port: object): void;
  };
}
