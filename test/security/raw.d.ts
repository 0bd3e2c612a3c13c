// Vite's `?raw` imports (a file's text), used to check the README against the code.
declare module '*?raw' {
  const text: string;
  export default text;
}
