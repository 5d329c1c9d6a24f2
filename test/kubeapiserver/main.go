// Command kubeapiserver is a test Kubernetes API server for schedlock's
// Kubernetes Lease backend: k8s.io/apiserver's generic API server (the
// server library kube-apiserver is built on) serving only
// coordination.k8s.io/v1 Leases, stored through the generic registry
// (registry/generic/registry.Store) in etcd3 storage, the same code path
// kube-apiserver takes for Leases. Not a cluster: no other resources, no
// controllers, no admission plugins, no RBAC.
//
//	kubeapiserver --etcd http://127.0.0.1:2379 --prefix /test --port 0 \
//	    --token SECRET --deny-namespace forbidden --kubeconfig kubeconfig
//
// It listens on 127.0.0.1 with a self-signed certificate, accepts two
// bearer tokens (user "schedlock", and user "namespaced", who may not read
// across namespaces; no anonymous requests), denies every request in
// --deny-namespace, and, once it serves, writes a kubeconfig (server, CA,
// both users, context "test" the current one and context "namespaced") to
// --kubeconfig.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	apiopenapi "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	basecompatibility "k8s.io/component-base/compatibility"

	"github.com/schedlock/schedlock/test/kubeapiserver/openapi"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	must(coordinationv1.AddToScheme(scheme))
	// The v1 types are the stored and the hub ("internal") version alike:
	// no conversion happens inside this server.
	scheme.AddKnownTypes(schema.GroupVersion{Group: coordinationv1.GroupName, Version: runtime.APIVersionInternal},
		&coordinationv1.Lease{}, &coordinationv1.LeaseList{})
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	scheme.AddUnversionedTypes(schema.GroupVersion{Version: "v1"},
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeapiserver:", err)
		os.Exit(1)
	}
}

func main() {
	etcd := flag.String("etcd", "http://127.0.0.1:2379", "etcd client URL")
	prefix := flag.String("prefix", "/schedlock-kubeapiserver", "etcd key prefix")
	port := flag.Int("port", 0, "port on 127.0.0.1 (0: any free one)")
	certDir := flag.String("cert-dir", "", "directory for the self-signed serving certificate (required)")
	token := flag.String("token", "", "the one accepted bearer token (required)")
	deny := flag.String("deny-namespace", "forbidden", "namespace every request is denied in")
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig written once the server serves (required)")
	namespace := flag.String("namespace", "default", "namespace of the kubeconfig's context")
	flag.Parse()
	if *certDir == "" || *token == "" || *kubeconfig == "" {
		must(fmt.Errorf("--cert-dir, --token and --kubeconfig are required"))
	}
	must(run(*etcd, *prefix, *port, *certDir, *token, *deny, *kubeconfig, *namespace))
}

func run(etcd, prefix string, port int, certDir, token, deny, kubeconfig, namespace string) error {
	gv := coordinationv1.SchemeGroupVersion
	etcdOpts := genericoptions.NewEtcdOptions(storagebackend.NewDefaultConfig(prefix, codecs.LegacyCodec(gv)))
	etcdOpts.StorageConfig.Transport.ServerList = []string{etcd}
	etcdOpts.DefaultStorageMediaType = runtime.ContentTypeProtobuf

	serving := genericoptions.NewSecureServingOptions().WithLoopback()
	serving.BindAddress = net.ParseIP("127.0.0.1")
	serving.BindPort = port
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	serving.Listener = ln
	serving.ServerCert.CertDirectory = certDir
	if err := serving.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}

	config := genericapiserver.NewRecommendedConfig(codecs)
	config.EffectiveVersion = basecompatibility.NewEffectiveVersionFromString("1.37.2", "", "")
	// The OpenAPI models of the Lease types (openapi/, made by
	// kube-openapi's openapi-gen): server-side apply's type converter
	// needs them, as in kube-apiserver.
	namer := apiopenapi.NewDefinitionNamer(scheme)
	config.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openapi.GetOpenAPIDefinitions, namer)
	config.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, namer)
	if err := etcdOpts.ApplyTo(&config.Config); err != nil {
		return fmt.Errorf("etcd options: %w", err)
	}
	if err := serving.ApplyTo(&config.SecureServing, &config.LoopbackClientConfig); err != nil {
		return fmt.Errorf("serving options: %w", err)
	}
	tokens := tokenfile.New(map[string]*user.DefaultInfo{
		token:                 {Name: "schedlock", UID: "schedlock", Groups: []string{user.AllAuthenticated}},
		token + namespacedTag: {Name: namespacedUser, UID: namespacedUser, Groups: []string{user.AllAuthenticated}},
	})
	config.Authentication.Authenticator = bearertoken.New(tokens)
	config.Authorization.Authorizer = authorize(deny)

	server, err := config.Complete().New("schedlock-test-kubeapiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &coordinationv1.Lease{} },
		NewListFunc:               func() runtime.Object { return &coordinationv1.LeaseList{} },
		DefaultQualifiedResource:  gv.WithResource("leases").GroupResource(),
		SingularQualifiedResource: gv.WithResource("lease").GroupResource(),
		CreateStrategy:            leaseStrategy{scheme, names.SimpleNameGenerator},
		UpdateStrategy:            leaseStrategy{scheme, names.SimpleNameGenerator},
		DeleteStrategy:            leaseStrategy{scheme, names.SimpleNameGenerator},
		TableConvertor:            rest.NewDefaultTableConvertor(gv.WithResource("leases").GroupResource()),
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: config.RESTOptionsGetter}); err != nil {
		return fmt.Errorf("lease storage: %w", err)
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(gv.Group, scheme, runtime.NewParameterCodec(scheme), codecs)
	group.VersionedResourcesStorageMap[gv.Version] = map[string]rest.Storage{"leases": store}
	if err := server.InstallAPIGroup(&group); err != nil {
		return fmt.Errorf("install coordination.k8s.io/v1: %w", err)
	}

	addr := config.SecureServing.Listener.Addr().(*net.TCPAddr)
	server.AddPostStartHookOrDie("schedlock-kubeconfig", func(genericapiserver.PostStartHookContext) error {
		return writeKubeconfig(kubeconfig, addr.Port, serving.ServerCert.CertKey.CertFile, token, namespace)
	})
	return server.PrepareRun().RunWithContext(genericapiserver.SetupSignalContext())
}

// denyNamespace allows the authenticated user everything except requests
// in namespace ns, which it denies with a reason.
// namespacedUser is the second account of the kubeconfig (context
// "namespaced", token: the first one's plus namespacedTag): it may do
// what the first may, but not across namespaces.
const (
	namespacedUser = "namespaced"
	namespacedTag  = "-namespaced"
)

// authorize denies every request in namespace deny, and the requests of
// namespacedUser that span every namespace (a list of all Leases); it
// allows the rest.
func authorize(deny string) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		switch {
		case a.IsResourceRequest() && a.GetNamespace() == deny:
			return authorizer.DecisionDeny, "namespace " + deny + " is closed to every account", nil
		case a.IsResourceRequest() && a.GetNamespace() == "" && a.GetUser().GetName() == namespacedUser:
			return authorizer.DecisionDeny, "user " + namespacedUser + " may not read across namespaces", nil
		}
		return authorizer.DecisionAllow, "", nil
	})
}

func writeKubeconfig(path string, port int, certFile, token, namespace string) error {
	ca, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{
		Server:                   "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		CertificateAuthorityData: ca,
	}
	cfg.AuthInfos["schedlock"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.AuthInfos[namespacedUser] = &clientcmdapi.AuthInfo{Token: token + namespacedTag}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "schedlock", Namespace: namespace}
	cfg.Contexts[namespacedUser] = &clientcmdapi.Context{Cluster: "test", AuthInfo: namespacedUser, Namespace: namespace}
	cfg.CurrentContext = "test"
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := clientcmd.WriteToFile(*cfg, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
