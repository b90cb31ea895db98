//! Which of the host's environment variables a command hook must not see.

use hookbox_core::credentials::glob_matches;

/// Credentials removed from every hook's environment unless the operator says otherwise: the
/// shared list [`hookbox_core::credentials::CREDENTIAL_ENV`] (model providers' keys and
/// account-wide cloud, forge, registry and secret-store credentials; its documentation says
/// which and why). The `http` runner keeps the same names out of hook headers.
pub const DEFAULT_DENY: &[&str] = hookbox_core::credentials::CREDENTIAL_ENV;

/// The environment policy: which inherited variables are removed before a hook runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvPolicy {
    /// Variable names or globs removed from the host's environment. Default: [`DEFAULT_DENY`].
    ///
    /// `*` matches any run of characters and `?` exactly one, so `*_API_KEY` removes every API
    /// key. Matching ignores ASCII case: a secret spelled `openai_api_key` is still a secret.
    /// A removed variable is simply absent for the hook (no error).
    pub deny: Vec<String>,
}

impl EnvPolicy {
    /// A policy removing nothing.
    pub fn allow_all() -> EnvPolicy {
        EnvPolicy { deny: Vec::new() }
    }

    /// This policy with `pattern` (a name or glob) added to the deny-list.
    pub fn with_deny(mut self, pattern: impl Into<String>) -> Self {
        self.deny.push(pattern.into());
        self
    }

    /// Whether the variable `name` is removed.
    pub fn denies(&self, name: &str) -> bool {
        self.deny.iter().any(|pattern| glob_matches(pattern, name))
    }
}

impl Default for EnvPolicy {
    fn default() -> Self {
        EnvPolicy {
            deny: DEFAULT_DENY.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_policy_denies_provider_keys_and_account_credentials_only() {
        let policy = EnvPolicy::default();
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "XAI_API_KEY",
            "HF_TOKEN",
            // Issue 8 #15: the cloud and forge credentials a native hook used to receive.
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "AZURE_CLIENT_SECRET",
            "AZURE_CLIENT_CERTIFICATE_PASSWORD",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "GITLAB_TOKEN",
            "NPM_TOKEN",
            "TWINE_PASSWORD",
            "CARGO_REGISTRY_TOKEN",
            "DOCKER_PASSWORD",
            "VAULT_TOKEN",
            "TF_TOKEN_app_terraform_io",
            "github_token",
        ] {
            assert!(policy.denies(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "SLACK_API_KEY",
            "ANTHROPIC_BASE_URL",
            "AWS_PROFILE",
            "AWS_REGION",
            "KUBECONFIG",
            "SSH_AUTH_SOCK",
            "GITHUB_ACTIONS",
            "TF_TOKEN",
        ] {
            assert!(!policy.denies(name), "{name}");
        }
        assert!(
            EnvPolicy::default()
                .with_deny("*_API_KEY")
                .denies("SLACK_API_KEY")
        );
        assert!(!EnvPolicy::allow_all().denies("OPENAI_API_KEY"));
    }
}
