//! Which environment variables hold credentials a hook has no business reading: model
//! providers' keys and account-wide cloud, forge, registry and secret-store credentials.
//!
//! One list for every runner, here because `hookbox-core` is the crate all of them depend on
//! (and a list of names is pure data): the native runner removes these variables from a
//! command hook's environment (`hookbox-command`'s `EnvPolicy`, whose default deny-list this
//! is), and the `http` runner refuses to expand them into a hook's headers even when the
//! hook's own `allowedEnvVars` lists them (`hookbox-http`'s `HttpPolicy::credential_env` is the
//! user's opt-in). A plugin's `hooks.json` is third-party code: it must not be able to ask for
//! the agent's model key by naming it.

/// Environment variables that hold credentials: kept from every hook unless the user's own policy
/// says otherwise — removed from a native hook's environment (`hookbox-command`'s `EnvPolicy`)
/// and never expanded into an `http` hook's headers (`hookbox-http`'s `HttpPolicy`).
///
/// Hooks are third-party plugin code; the agent that runs hookbox typically holds a model
/// provider's key in its environment, and often a developer's or a CI job's cloud, forge and
/// registry credentials too. A hook has no business reading them (the main source scrubs
/// provider keys too, agentao-notes §6). Two groups:
///
/// **Model providers and gateways**, as their SDKs read them:
///
/// - Anthropic: `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, `CLAUDE_CODE_OAUTH_TOKEN`
/// - OpenAI and Azure: `OPENAI_API_KEY`, `AZURE_OPENAI_API_KEY`, `AZURE_API_KEY`
/// - Google: `GEMINI_API_KEY`, `GOOGLE_API_KEY`, `GOOGLE_GENERATIVE_AI_API_KEY`
/// - AWS Bedrock: `AWS_BEARER_TOKEN_BEDROCK`
/// - Others: Mistral, Groq, DeepSeek, OpenRouter, xAI, Cohere (`COHERE_API_KEY`, `CO_API_KEY`),
///   Together (`TOGETHER_API_KEY`, `TOGETHERAI_API_KEY`), Fireworks, Perplexity
///   (`PERPLEXITY_API_KEY`, `PPLX_API_KEY`), Cerebras, Replicate (`REPLICATE_API_TOKEN`),
///   Hugging Face (`HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`, `HUGGINGFACE_API_KEY`), Voyage,
///   DashScope, Moonshot, Zhipu, NVIDIA, AI21.
///
/// **Account-wide credentials** (issue 8 #15): each one lets its holder act as the developer or
/// the CI job on a whole account — read or delete cloud resources, push code, publish a package
/// under the developer's name, read a secret store. Only variables that hold the secret itself
/// (or, for Google and Azure, name the key file the SDKs load without asking):
///
/// | variable | read by | why it is a secret |
/// | --- | --- | --- |
/// | `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` | every AWS SDK and the CLI | a static IAM key pair |
/// | `AWS_SESSION_TOKEN`, `AWS_SECURITY_TOKEN` | AWS SDKs (the second is boto2's older name) | the temporary credential of an assumed role or SSO session |
/// | `AWS_CONTAINER_AUTHORIZATION_TOKEN` | AWS SDKs on ECS/EKS Pod Identity | authorises calls to the credential endpoint |
/// | `GOOGLE_APPLICATION_CREDENTIALS` | Google Cloud client libraries | path of a service-account key the libraries load on their own |
/// | `GOOGLE_CREDENTIALS`, `GOOGLE_OAUTH_ACCESS_TOKEN` | Terraform's Google provider | a service-account key's JSON text; an OAuth access token |
/// | `CLOUDSDK_AUTH_ACCESS_TOKEN` | `gcloud` | an OAuth access token |
/// | `AZURE_CLIENT_SECRET`, `AZURE_CLIENT_CERTIFICATE_PASSWORD`, `AZURE_PASSWORD` | Azure Identity (`EnvironmentCredential`) | a service principal's secret; the password of its certificate; a user's password |
/// | `ARM_CLIENT_SECRET`, `ARM_ACCESS_KEY` | Terraform's AzureRM provider and backend | a service principal's secret; a storage account key |
/// | `AZURE_STORAGE_KEY`, `AZURE_STORAGE_CONNECTION_STRING`, `AZURE_STORAGE_SAS_TOKEN` | Azure CLI and storage SDKs | keys to a storage account |
/// | `GITHUB_TOKEN`, `GH_TOKEN`, `GH_ENTERPRISE_TOKEN`, `GITHUB_ENTERPRISE_TOKEN` | `gh`, GitHub Actions, most GitHub tooling | push, release and API rights on repositories |
/// | `GITLAB_TOKEN`, `GL_TOKEN`, `GITLAB_PRIVATE_TOKEN`, `CI_JOB_TOKEN` | `glab`, semantic-release, python-gitlab, GitLab CI | the same on GitLab |
/// | `NPM_TOKEN`, `NODE_AUTH_TOKEN`, `YARN_NPM_AUTH_TOKEN` | `.npmrc` conventions, `actions/setup-node`, Yarn | publishes npm packages |
/// | `TWINE_PASSWORD`, `UV_PUBLISH_TOKEN`, `POETRY_PYPI_TOKEN_PYPI`, `PYPI_TOKEN` | twine, uv, Poetry, CI conventions | publishes PyPI packages |
/// | `CARGO_REGISTRY_TOKEN`, `GEM_HOST_API_KEY`, `NUGET_API_KEY` | cargo, RubyGems, NuGet | publishes crates, gems, NuGet packages |
/// | `DOCKER_PASSWORD`, `DOCKER_AUTH_CONFIG`, `CI_REGISTRY_PASSWORD` | CI conventions, GitLab Runner, GitLab CI | pushes container images |
/// | `VAULT_TOKEN` | HashiCorp Vault CLI and SDKs | reads the secret store |
/// | `OP_SERVICE_ACCOUNT_TOKEN`, `OP_CONNECT_TOKEN` | 1Password CLI and Connect | reads vaults |
/// | `DOPPLER_TOKEN` | Doppler CLI | reads the secret store |
/// | `TF_TOKEN_*` (a glob) | Terraform (one variable per host, `TF_TOKEN_app_terraform_io`) | runs and reads Terraform Cloud workspaces and their state |
/// | `DIGITALOCEAN_ACCESS_TOKEN`, `DIGITALOCEAN_TOKEN` | `doctl`, Terraform | controls the cloud account |
/// | `CLOUDFLARE_API_TOKEN`, `CLOUDFLARE_API_KEY` | `wrangler`, Terraform | controls DNS and workers |
/// | `HEROKU_API_KEY` | Heroku CLI | controls the apps |
///
/// Not a blanket `*_API_KEY` or `*_TOKEN`: hooks legitimately use their own services' keys (a
/// Slack or ticketing key), and scrubbing those would silently break them. Operators who want
/// the blanket rule add the glob to the native runner's `EnvPolicy::deny`. Names that only *point* at credentials
/// are kept (`AWS_PROFILE`, `AWS_REGION`, `KUBECONFIG`): a native hook runs as the user and can
/// read `~/.aws/credentials` anyway; the deny-list keeps secrets out of the environment, it does
/// not sandbox the hook. `SSH_AUTH_SOCK` is kept as well (hooks run `git fetch` over SSH); an
/// operator who does not want hooks to use the SSH agent adds it.
pub const CREDENTIAL_ENV: &[&str] = &[
    // Model providers.
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "AWS_BEARER_TOKEN_BEDROCK",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "XAI_API_KEY",
    "COHERE_API_KEY",
    "CO_API_KEY",
    "TOGETHER_API_KEY",
    "TOGETHERAI_API_KEY",
    "FIREWORKS_API_KEY",
    "PERPLEXITY_API_KEY",
    "PPLX_API_KEY",
    "CEREBRAS_API_KEY",
    "REPLICATE_API_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "HUGGINGFACE_API_KEY",
    "VOYAGE_API_KEY",
    "DASHSCOPE_API_KEY",
    "MOONSHOT_API_KEY",
    "ZHIPUAI_API_KEY",
    "NVIDIA_API_KEY",
    "AI21_API_KEY",
    // Cloud accounts (see the table above for what each one grants).
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CREDENTIALS",
    "GOOGLE_OAUTH_ACCESS_TOKEN",
    "CLOUDSDK_AUTH_ACCESS_TOKEN",
    "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE_PASSWORD",
    "AZURE_PASSWORD",
    "ARM_CLIENT_SECRET",
    "ARM_ACCESS_KEY",
    "AZURE_STORAGE_KEY",
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_STORAGE_SAS_TOKEN",
    "DIGITALOCEAN_ACCESS_TOKEN",
    "DIGITALOCEAN_TOKEN",
    "CLOUDFLARE_API_TOKEN",
    "CLOUDFLARE_API_KEY",
    "HEROKU_API_KEY",
    // Source forges.
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "GITLAB_TOKEN",
    "GL_TOKEN",
    "GITLAB_PRIVATE_TOKEN",
    "CI_JOB_TOKEN",
    // Package and container registries: publishing under the developer's name.
    "NPM_TOKEN",
    "NODE_AUTH_TOKEN",
    "YARN_NPM_AUTH_TOKEN",
    "TWINE_PASSWORD",
    "UV_PUBLISH_TOKEN",
    "POETRY_PYPI_TOKEN_PYPI",
    "PYPI_TOKEN",
    "CARGO_REGISTRY_TOKEN",
    "GEM_HOST_API_KEY",
    "NUGET_API_KEY",
    "DOCKER_PASSWORD",
    "DOCKER_AUTH_CONFIG",
    "CI_REGISTRY_PASSWORD",
    // Secret stores and infrastructure-as-code backends.
    "VAULT_TOKEN",
    "OP_SERVICE_ACCOUNT_TOKEN",
    "OP_CONNECT_TOKEN",
    "DOPPLER_TOKEN",
    "TF_TOKEN_*",
];

/// Whether `name` is one of [`CREDENTIAL_ENV`] (a name there, or a match of a glob there).
pub fn is_credential_env(name: &str) -> bool {
    CREDENTIAL_ENV.iter().any(|p| glob_matches(p, name))
}

/// Whether `name` matches `pattern`: `*` matches any run of characters and `?` exactly one,
/// ASCII case-insensitively (a secret spelled `openai_api_key` is still a secret). Linear-ish
/// time: on a mismatch it only backtracks to the last `*`, so a hostile pattern like
/// `*a*a*a*b` cannot blow up.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    // Position of the last `*` in the pattern and the name position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c.eq_ignore_ascii_case(&n[ni]) => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                // Let the last `*` swallow one more character and retry from there.
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_match_ignoring_ascii_case() {
        assert!(glob_matches("OPENAI_API_KEY", "OPENAI_API_KEY"));
        assert!(glob_matches("OPENAI_API_KEY", "openai_api_key"));
        assert!(!glob_matches("OPENAI_API_KEY", "OPENAI_API_KEYS"));
        assert!(!glob_matches("OPENAI_API_KEY", "OPENAI_API_KE"));
    }

    #[test]
    fn star_and_question_mark() {
        assert!(glob_matches("*_API_KEY", "SLACK_API_KEY"));
        assert!(glob_matches("*_API_KEY", "_API_KEY"));
        assert!(!glob_matches("*_API_KEY", "API_KEY"));
        assert!(glob_matches("AWS_*", "AWS_SECRET_ACCESS_KEY"));
        assert!(glob_matches("*SECRET*", "MY_SECRET_THING"));
        assert!(glob_matches("KEY?", "KEY1"));
        assert!(!glob_matches("KEY?", "KEY"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("**", "anything"));
        assert!(!glob_matches("", "X"));
        assert!(glob_matches("A*B*C", "AxxBxxC"));
        assert!(!glob_matches("A*B*C", "AxxCxxB"));
    }

    #[test]
    fn hostile_pattern_finishes() {
        let name = "a".repeat(10_000);
        assert!(!glob_matches("*a*a*a*a*a*a*b", &name));
    }

    #[test]
    fn provider_keys_and_account_credentials_are_credentials() {
        for name in [
            "ANTHROPIC_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "TF_TOKEN_app_terraform_io",
            "openai_api_key",
        ] {
            assert!(is_credential_env(name), "{name}");
        }
        for name in [
            "PATH",
            "HOOK_TOKEN",
            "SLACK_API_KEY",
            "AWS_REGION",
            "TF_TOKEN",
        ] {
            assert!(!is_credential_env(name), "{name}");
        }
    }

    #[test]
    fn the_list_has_no_duplicates() {
        let mut names: Vec<&str> = CREDENTIAL_ENV.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CREDENTIAL_ENV.len());
    }
}
