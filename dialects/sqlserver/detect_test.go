package sqlserver

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestParseServer(t *testing.T) {
	tests := []struct {
		name string
		in   Server
		want dialects.Info
		rel  string
	}{
		{
			name: "SQL Server 2019 on Windows",
			in: Server{
				Banner:         "Microsoft SQL Server 2019 (RTM-CU22) (KB5027702) - 15.0.4322.2 (X64) \n\tJul 27 2023 18:11:00 \n\tCopyright (C) 2019 Microsoft Corporation\n\tEnterprise Edition (64-bit) on Windows Server 2019 Standard 10.0 <X64> (Build 17763: ) (Hypervisor)\n",
				EngineEdition:  3,
				ProductVersion: "15.0.4322.2",
				Edition:        "Enterprise Edition (64-bit)",
			},
			want: dialects.Info{Product: Product, Version: "15.0.4322.2", Banner: "Microsoft SQL Server 2019 (RTM-CU22) (KB5027702) - 15.0.4322.2 (X64)"},
			rel:  "SQL Server 2019",
		},
		{
			name: "SQL Server 2012 Express",
			in:   Server{Banner: "Microsoft SQL Server 2012 - 11.0.2100.60 (X64) \n\tFeb 10 2012 19:39:15", EngineEdition: 4, ProductVersion: "11.0.2100.60", Edition: "Express Edition (64-bit)"},
			want: dialects.Info{Product: Product, Version: "11.0.2100.60", Banner: "Microsoft SQL Server 2012 - 11.0.2100.60 (X64)"},
			rel:  "SQL Server 2012",
		},
		{
			name: "SQL Server 2022 on Linux, RCSI on",
			in:   Server{Banner: "Microsoft SQL Server 2022 (RTM-CU12) (KB5033663) - 16.0.4115.5 (X64) \n\tDeveloper Edition (64-bit) on Linux (Ubuntu 22.04.4 LTS) <X64>", EngineEdition: 3, ProductVersion: "16.0.4115.5", ReadCommittedSnapshot: true},
			want: dialects.Info{Product: Product, Version: "16.0.4115.5", Mode: ModeReadCommittedSnapshot, Banner: "Microsoft SQL Server 2022 (RTM-CU12) (KB5033663) - 16.0.4115.5 (X64)"},
			rel:  "SQL Server 2022",
		},
		{
			name: "Azure SQL Database",
			in:   Server{Banner: "Microsoft SQL Azure (RTM) - 12.0.2000.8 \n\tMay 28 2024 16:48:47 \n\tCopyright (C) 2022 Microsoft Corporation\n", EngineEdition: 5, ProductVersion: "12.0.2000.8", Edition: "SQL Azure", ReadCommittedSnapshot: true},
			want: dialects.Info{Product: Product, Variant: VariantAzureSQLDatabase, Version: "12.0.2000.8", Mode: ModeReadCommittedSnapshot, Banner: "Microsoft SQL Azure (RTM) - 12.0.2000.8"},
		},
		{
			name: "Azure SQL Managed Instance",
			in:   Server{Banner: "Microsoft SQL Azure (RTM) - 12.0.2000.8 \n\tCopyright (C) 2022 Microsoft Corporation", EngineEdition: 8, ProductVersion: "16.0.946.0", Edition: "SQL Azure"},
			want: dialects.Info{Product: Product, Variant: VariantAzureSQLManagedInstance, Version: "16.0.946.0", Banner: "Microsoft SQL Azure (RTM) - 12.0.2000.8"},
		},
		{
			name: "Azure Synapse dedicated pool",
			in:   Server{Banner: "Microsoft Azure SQL Data Warehouse - 10.0.15665.0 Dec 10 2020 07:16:12 Copyright (c) Microsoft Corporation", EngineEdition: 6, ProductVersion: "10.0.15665.0"},
			want: dialects.Info{Product: Product, Variant: VariantAzureSynapse, Version: "10.0.15665.0", Banner: "Microsoft Azure SQL Data Warehouse - 10.0.15665.0 Dec 10 2020 07:16:12 Copyright (c) Microsoft Corporation"},
		},
		{
			name: "no ProductVersion: the banner's version",
			in:   Server{Banner: "Microsoft SQL Server 2017 (RTM-CU31) (KB5016884) - 14.0.3456.2 (X64)"},
			want: dialects.Info{Product: Product, Version: "14.0.3456.2", Banner: "Microsoft SQL Server 2017 (RTM-CU31) (KB5016884) - 14.0.3456.2 (X64)"},
			rel:  "SQL Server 2017",
		},
		{
			name: "something else",
			in:   Server{Banner: "Sybase ASE 16.0"},
			want: dialects.Info{Banner: "Sybase ASE 16.0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.Dialect = Name
			got := ParseServer(tt.in)
			if got != tt.want {
				t.Errorf("ParseServer =\n%+v\nwant\n%+v", got, tt.want)
			}
			if rel := ReleaseName(got); rel != tt.rel {
				t.Errorf("ReleaseName = %q, want %q", rel, tt.rel)
			}
		})
	}
}

// TestDetectOnSimulator reads the detection query's row shape.
func TestDetectOnSimulator(t *testing.T) {
	sim := newSim()
	sim.engineEdition, sim.productVersion, sim.rcsi = 5, "12.0.2000.8", true
	sim.banner = "Microsoft SQL Azure (RTM) - 12.0.2000.8 \n\tMay 28 2024 16:48:47"
	db := sim.detected(t)
	want := dialects.Info{Dialect: Name, Product: Product, Variant: VariantAzureSQLDatabase, Version: "12.0.2000.8", Mode: ModeReadCommittedSnapshot, Banner: "Microsoft SQL Azure (RTM) - 12.0.2000.8"}
	if db.Info != want {
		t.Errorf("Info = %+v, want %+v", db.Info, want)
	}
	if !db.RCSI {
		t.Error("RCSI = false on a database with READ_COMMITTED_SNAPSHOT ON")
	}
}

func TestRecommend(t *testing.T) {
	s, why := newBackend(nil, Server{Banner: "Microsoft SQL Server 2016 (SP3) - 13.0.6300.2 (X64)", EngineEdition: 2}, nil).RecommendStrategy()
	if s != dialects.StrategySession || why == "" {
		t.Errorf("SQL Server 2016: %s (%s), want session", s, why)
	}
	s, why = newBackend(nil, Server{Banner: "Microsoft SQL Azure (RTM) - 12.0.2000.8", EngineEdition: 5, ReadCommittedSnapshot: true}, nil).RecommendStrategy()
	if s != dialects.StrategySession || !strings.Contains(why, "READCOMMITTEDLOCK") {
		t.Errorf("Azure SQL Database with RCSI: %s (%s), want session and the READCOMMITTEDLOCK note", s, why)
	}
}

// TestSynapseRefused proves Azure Synapse, which has neither sp_getapplock
// nor OUTPUT, gets no locker that would silently fail, but an error that
// says so.
func TestSynapseRefused(t *testing.T) {
	sim := newSim()
	sim.engineEdition, sim.banner = 6, "Microsoft Azure SQL Data Warehouse - 10.0.15665.0"
	db := sim.detected(t)
	for _, s := range dialects.Strategies {
		_, err := db.Locker(s, dialects.Table{})
		if !errors.Is(err, dialects.ErrUnsupported) || !strings.Contains(err.Error(), "Synapse") {
			t.Errorf("%s locker on Synapse: %v; want ErrUnsupported naming Synapse", s, err)
		}
	}
}
