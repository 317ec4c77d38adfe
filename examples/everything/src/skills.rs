//! Skills (SEP-2640) for the suite's `sep-2640-*` scenarios: `pdf-processing`
//! (a reference, templates and a nested template directory) and
//! `acme/billing/refunds` (a skill under an organising prefix). The files
//! are in `skills/`, built into the binary so it serves them from anywhere.

use tessera::SkillDef;

/// Every skill of the fixture.
pub fn all() -> Vec<SkillDef> {
    vec![
        SkillDef::new(
            "pdf-processing",
            include_str!("../skills/pdf-processing/SKILL.md"),
        )
        .file(
            "references/FORMS.md",
            include_str!("../skills/pdf-processing/references/FORMS.md"),
        )
        .file(
            "templates/invoice.md",
            include_str!("../skills/pdf-processing/templates/invoice.md"),
        )
        .file(
            "templates/regional/eu-invoice.md",
            include_str!("../skills/pdf-processing/templates/regional/eu-invoice.md"),
        ),
        SkillDef::new(
            "acme/billing/refunds",
            include_str!("../skills/acme/billing/refunds/SKILL.md"),
        )
        .file(
            "examples/email.md",
            include_str!("../skills/acme/billing/refunds/examples/email.md"),
        ),
    ]
}
