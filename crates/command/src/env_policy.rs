//! Which of the host's environment variables a command hook must not see.

/// Provider credentials removed from every hook's environment unless the operator says otherwise.
///
/// Hooks are third-party plugin code; the agent that runs hookbox typically holds a model
/// provider's key in its environment, and a hook has no business reading it (the main source
/// scrubs them too, agentao-notes §6). The list names the credential variables of the common
/// model providers and gateways, as their SDKs read them:
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
/// Not a blanket `*_API_KEY`: hooks legitimately use their own services' keys (a Slack or
/// ticketing key), and scrubbing those would silently break them. Operators who want the
/// blanket rule add the glob to [`EnvPolicy::deny`].
pub const DEFAULT_DENY: &[&str] = &[
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
];

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

/// `*`/`?` glob match, ASCII case-insensitive, in linear-ish time: on a mismatch it only
/// backtracks to the last `*`, so a hostile pattern like `*a*a*a*b` cannot blow up.
fn glob_matches(pattern: &str, name: &str) -> bool {
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
    fn default_policy_denies_provider_keys_only() {
        let policy = EnvPolicy::default();
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "XAI_API_KEY",
            "HF_TOKEN",
        ] {
            assert!(policy.denies(name), "{name}");
        }
        for name in ["PATH", "HOME", "SLACK_API_KEY", "ANTHROPIC_BASE_URL"] {
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
