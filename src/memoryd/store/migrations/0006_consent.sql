-- memoryd schema v6: nobody is put into a space without saying yes.
--
-- A member added by an admin (or made by share-to-user, org setup) starts as
-- 'invited': the space is not one of theirs, so none of its memories reach
-- their search, lists, profile or injected context, until they accept. The
-- members from before this version were already in their spaces: they stay
-- 'active' (and may now leave).
ALTER TABLE space_members ADD COLUMN status TEXT NOT NULL DEFAULT 'active'
    CHECK (status IN ('active', 'invited'));
ALTER TABLE space_members ADD COLUMN invited_by TEXT;
DROP INDEX space_members_user;
CREATE INDEX space_members_user ON space_members(user_id, status);
