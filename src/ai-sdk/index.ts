/**
 * `mnemo/ai-sdk`: Mnemo's memory for the Vercel AI SDK (`ai`, an optional peer dependency needed
 * only here): `mnemoMiddleware` for `wrapLanguageModel` (middleware.ts) and `mnemoTools`, the
 * memory tools as AI SDK tools (tools.ts).
 *
 * @module mnemo/ai-sdk
 */
export { DEFAULT_SESSION_ROWS, mnemoMiddleware, type MnemoMiddlewareOptions } from './middleware.ts';
export { mnemoTools, type MnemoToolsOptions } from './tools.ts';
