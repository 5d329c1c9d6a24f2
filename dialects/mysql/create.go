package mysql

import (
	"fmt"

	"github.com/schedlock/schedlock/dialects"
)

// Create is CREATE TABLE IF NOT EXISTS for s, InnoDB and utf8mb4, the name
// column in b.Collation and the primary key:
//
//   - schedlock (native): name VARCHAR(255), DATETIME(3) times holding UTC,
//     owner VARCHAR(255), token BIGINT NOT NULL DEFAULT 0;
//   - shedlock: ShedLock's README table, name VARCHAR(64) and TIMESTAMP(3)
//     times; lock_until gets an explicit DEFAULT so that servers with
//     explicit_defaults_for_timestamp=OFF (MySQL 5.7, MariaDB before 10.10)
//     do not give it ON UPDATE CURRENT_TIMESTAMP;
//   - sys_sched_lock: lock_name VARCHAR(128), DATETIME(3) times.
func (b *Builder) Create(s dialects.Schema) string {
	nameLen, timeType := b.MaxNameRunes(s), "DATETIME(3)"
	untilDefault, lockedAtDefault := "", ""
	if s.Preset == dialects.PresetShedlock {
		timeType = "TIMESTAMP(3)"
		untilDefault = " DEFAULT CURRENT_TIMESTAMP(3)"
		lockedAtDefault = " DEFAULT CURRENT_TIMESTAMP(3)"
	}
	sql := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n"+
		"  %s VARCHAR(%d) CHARACTER SET utf8mb4 COLLATE %s NOT NULL,\n"+
		"  %s %s NOT NULL%s,\n"+
		"  %s %s NOT NULL%s,\n"+
		"  %s VARCHAR(255) NOT NULL,\n",
		s.Table,
		s.NameCol, nameLen, b.Collation,
		s.UntilCol, timeType, untilDefault,
		s.LockedAtCol, timeType, lockedAtDefault,
		s.OwnerCol)
	if s.TokenCol != "" {
		sql += fmt.Sprintf("  %s BIGINT NOT NULL DEFAULT 0,\n", s.TokenCol)
	}
	return sql + fmt.Sprintf("  PRIMARY KEY (%s)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4", s.NameCol)
}
