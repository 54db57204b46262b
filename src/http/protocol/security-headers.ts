/**
 * The docs page's security headers, set by @fastify/helmet (https://github.com/fastify/fastify-helmet)
 * on the docs routes alone: helmet's defaults, with a Content-Security-Policy that allows exactly
 * what Swagger UI loads (its own scripts and styles, the inline styles it sets, data: images) and a
 * resource policy that lets other origins call the API (CORS); only embedding is refused.
 */
export const DOCS_HELMET_OPTIONS = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      'default-src': ["'self'"],
      'script-src': ["'self'"],
      'style-src': ["'self'", "'unsafe-inline'"],
      'img-src': ["'self'", 'data:'],
      'connect-src': ["'self'"],
      'font-src': ["'self'"],
      'object-src': ["'none'"],
      'base-uri': ["'none'"],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
    },
  },
  crossOriginResourcePolicy: { policy: 'cross-origin' },
} as const;

// A JSON response is never a document: it may load nothing and be framed nowhere, and must not be sniffed as HTML.
export const API_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};
