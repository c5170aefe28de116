import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export interface HttpResult {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}
