-- resource_labels: the policy's label of each resource string the shard's steps read, run
-- or send as payload, and of each payload's contents as `<payload>/*` (grain: resource;
-- only resources matching at least one labels.resources rule).
-- Inputs: resources, policy_resource_labels.
-- Parameters: none.
-- A resource matches a rule when it is like the rule's glob (case-insensitive, `\` escapes)
-- and the rule's `unless` (RE2; none: '[^\s\S]') does not match it;
-- its label is the join (max of each level) of the rules it matches, except that when an
-- override rule matches it only override rules count for it (`*.pub` makes
-- `~/.ssh/id_rsa.pub` public though `*id_rsa*` matches it too). Each distinct resource is
-- tested once, however many steps name it; only the accesses whose content flows count
-- (read, execute: a source's label in action_roles; payload, read: what a sink sends in
-- self_sends), not a destination or a write (a fifth of the strings). Label levels: confidentiality 0 public, 1 internal, 2 secret;
-- integrity 0 trusted, 1 untrusted.
with distinct_resources as (
    select distinct resource, false as contents from resources where access in ('read', 'execute', 'payload')
    union
    -- a folder sent (`scp -r ~/.ssh host:`, `tar czf - ~/.aws | nc ...`) sends what is in
    -- it: `<folder>/*` is labelled by the rules about a folder's contents (globs ending in
    -- `/*`: `*.ssh/*`), for sql/self_sends.sql, which reads it only for a payload that has
    -- no label of its own (`~/.ssh/id_rsa.pub` keeps the public of its override). Only
    -- for payloads, and local paths (not `env:NAME`, `data:...`, a URL): listing a folder
    -- (`ls ~/.ssh`) reads its names, not its keys, so a folder read keeps its own label
    select distinct resource || '/*', true from resources
    where access = 'payload' and not ends_with(resource, '/*') and not regexp_matches(resource, '^[a-z][a-z0-9+.-]*:')
),
globbed as materialized (
    select d.resource, p.conf, p.integ, p.override, p.unless
    from distinct_resources d
    join policy_resource_labels p on d.resource ilike p."like" escape '\' and (not d.contents or ends_with(p.pattern, '/*'))
),
matches as (
    select resource, conf, integ, override, bool_or(override) over (partition by resource) as overridden
    from globbed
    -- a rule's `unless` (RE2) drops what its glob over-reaches (`*token*` names a secret file,
    -- not `src/auth/token_refresh.py`); tested on the few rows the globs matched
    where unless = '[^\s\S]' or not regexp_matches(resource, unless)
),
final as (
    select resource, max(conf) as conf, max(integ) as integ
    from matches
    where override or not overridden
    group by resource
)
select * from final
