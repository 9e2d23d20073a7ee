-- resource_labels: the policy's label of each resource string the shard's steps read, run
-- or send as payload (grain: resource; only resources matching at least one
-- labels.resources rule).
-- Inputs: resources, policy_resource_labels.
-- Parameters: none.
-- A resource matches a rule when it is like the rule's glob (case-insensitive, `\` escapes);
-- its label is the join (max of each level) of the rules it matches, except that when an
-- override rule matches it only override rules count for it (`*.pub` makes
-- `~/.ssh/id_rsa.pub` public though `*id_rsa*` matches it too). Each distinct resource is
-- tested once, however many steps name it; only the accesses whose content flows count
-- (read, execute: a source's label in action_roles; payload, read: what a sink sends in
-- self_sends), not a destination or a write (a fifth of the strings). Label levels: confidentiality 0 public, 1 internal, 2 secret;
-- integrity 0 trusted, 1 untrusted.
with distinct_resources as (
    select distinct resource from resources where access in ('read', 'execute', 'payload')
),
matches as (
    select d.resource, p.conf, p.integ, p.override,
        bool_or(p.override) over (partition by d.resource) as overridden
    from distinct_resources d
    join policy_resource_labels p on d.resource ilike p."like" escape '\'
),
final as (
    select resource, max(conf) as conf, max(integ) as integ
    from matches
    where override or not overridden
    group by resource
)
select * from final
