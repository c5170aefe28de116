import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export interface HttpResult {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function jsonResponse(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: status,
    // A JSON answer is data: never sniffed as anything else, never rendered in a frame.
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      ...headers,
    },
    body: JSON.stringify(body),
  };
}
