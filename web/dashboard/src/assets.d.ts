/** Style sheets are bundled by esbuild into the page's CSS file. */
declare module '*.css';
