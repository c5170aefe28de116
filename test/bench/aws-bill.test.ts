import { describe, expect, it } from 'vitest';
import { AWS_PRICES, billOf, sumBills, type RequestUsage } from '../../bench/aws-bill.js';
import { dataSizeBytes, durationMs } from '../../local/trino/trino-query-info.js';

// The bench's bill of a request (bench/aws-bill.ts): each service priced as AWS prices it.

const idle: RequestUsage = {
  statementBytes: [],
  s3Lists: 0,
  s3Gets: 0,
  resultPages: 0,
  lambdaMs: 0,
  lambdaMemoryMb: 512,
  dynamoReadUnits: 0,
  dynamoWriteUnits: 0,
};

describe('the bill of a request', () => {
  it('prices each Athena statement at no less than 10 MB, and above it by the TiB', () => {
    const small = billOf({ ...idle, statementBytes: [1, 2] });
    expect(small.athena).toBeCloseTo(2 * ((10 * 1000 ** 2) / 2 ** 40) * 5, 12);
    const large = billOf({ ...idle, statementBytes: [2 ** 40] });
    expect(large.athena).toBeCloseTo(5, 12);
  });

  it("prices S3's LISTs and a result's two PUTs at the LIST rate, its GETs (files and result pages) at the GET rate", () => {
    const bill = billOf({ ...idle, statementBytes: [0], s3Lists: 998, s3Gets: 999, resultPages: 1 });
    expect(bill.s3).toBeCloseTo(AWS_PRICES.s3ListPer1000 + AWS_PRICES.s3GetPer1000, 12);
  });

  it('prices the function by GB-second at its memory, plus the request; DynamoDB by unit; the HTTP API by request', () => {
    const bill = billOf({ ...idle, lambdaMs: 2000, lambdaMemoryMb: 512, dynamoReadUnits: 2, dynamoWriteUnits: 3 });
    expect(bill.lambda).toBeCloseTo(1 * AWS_PRICES.lambdaPerGbSecond + 0.2 / 1e6, 15);
    expect(bill.dynamo).toBeCloseTo((2 * 0.125 + 3 * 0.625) / 1e6, 15);
    expect(bill.apiGateway).toBeCloseTo(1 / 1e6, 15);
    expect(bill.total).toBeCloseTo(bill.lambda + bill.dynamo + bill.apiGateway, 15);
    expect(sumBills([bill, bill]).total).toBeCloseTo(2 * bill.total, 15);
  });

  it("prices a whole load's usage by its requests: each an HTTP API request and an invocation", () => {
    const one = billOf({ ...idle, lambdaMs: 100 });
    const load = billOf({ ...idle, lambdaMs: 1300, requests: 13 });
    expect(load.apiGateway).toBeCloseTo(13 * one.apiGateway, 15);
    expect(load.lambda).toBeCloseTo(13 * one.lambda, 15);
  });
});

describe("Trino's data sizes", () => {
  it('reads each unit as a power of 1024', () => {
    expect(dataSizeBytes('8408B')).toBe(8408);
    expect(dataSizeBytes('1.5kB')).toBe(1536);
    expect(dataSizeBytes('2MB')).toBe(2 * 1024 ** 2);
    expect(() => dataSizeBytes('12 MB')).toThrow(/not a Trino data size/);
  });
});

describe("Trino's durations", () => {
  it('reads each unit in milliseconds', () => {
    expect(durationMs('237.45ms')).toBeCloseTo(237.45, 9);
    expect(durationMs('1.20s')).toBeCloseTo(1200, 9);
    expect(durationMs('3.00m')).toBeCloseTo(180_000, 9);
    expect(durationMs('850.00us')).toBeCloseTo(0.85, 9);
    expect(durationMs('12.00ns')).toBeCloseTo(0.000012, 12);
    expect(durationMs('2.00h')).toBe(7_200_000);
    expect(() => durationMs('5 ms')).toThrow(/not a Trino duration/);
  });
});
