// Lambda bundles only: the SDK's default credential chain (SSO, INI files, STS web identity, IMDS...) replaced
// by the environment variables Lambda always sets (SAM local and LocalStack set them too). Saves ~90 KB
// per bundle, i.e. cold-start time. Wired by an esbuild alias in route-function.ts; never used locally.
export { fromEnv as defaultProvider } from '@aws-sdk/credential-provider-env';
