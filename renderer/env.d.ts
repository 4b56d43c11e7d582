// Vite's `import.meta.env` (DEV, MODE), which the renderer reads to choose how loudly a manifest mistake fails.
/// <reference types="vite/client" />
