// Vite's `?raw` imports (a file's text), used to check the README against the code.
declare module '*?raw' {
  const text: string;
  export default text;
}

// Vite's `import.meta.glob` (the text of many files at once), used to check package.json against src/.
interface ImportMeta {
  glob<T>(pattern: string, options: { query: '?raw'; import: 'default'; eager: true }): Record<string, T>;
}
