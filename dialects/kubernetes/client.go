package kubernetes

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// The client knows only coordination.k8s.io/v1 (and the meta types every
// API answer may be): client-go's generated typed client
// (kubernetes/typed/coordination/v1) registers every built-in API group
// through client-go/kubernetes/scheme, which adds about 24 MB to the
// binary; these four calls are what it would make, on client-go's own
// rest.RESTClient.
var (
	scheme         = runtime.NewScheme()
	codecs         = serializer.NewCodecFactory(scheme)
	parameterCodec = runtime.NewParameterCodec(scheme)
)

func init() {
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
}

// newRESTClient is a REST client of coordination.k8s.io/v1 on rc.
func newRESTClient(rc *rest.Config) (*rest.RESTClient, error) {
	c := rest.CopyConfig(rc)
	gv := coordinationv1.SchemeGroupVersion
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	c.NegotiatedSerializer = codecs.WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientFor(c)
}

// leaseClient is the Lease client of one namespace: Get, Create, Update
// and List as client-go's typed LeaseInterface makes them.
type leaseClient struct {
	c  *rest.RESTClient
	ns string
}

func (l leaseClient) Get(ctx context.Context, name string, _ metav1.GetOptions) (*coordinationv1.Lease, error) {
	out := &coordinationv1.Lease{}
	err := l.c.Get().Namespace(l.ns).Resource("leases").Name(name).Do(ctx).Into(out)
	return out, err
}

func (l leaseClient) Create(ctx context.Context, lease *coordinationv1.Lease, _ metav1.CreateOptions) (*coordinationv1.Lease, error) {
	out := &coordinationv1.Lease{}
	err := l.c.Post().Namespace(l.ns).Resource("leases").Body(lease).Do(ctx).Into(out)
	return out, err
}

func (l leaseClient) Update(ctx context.Context, lease *coordinationv1.Lease, _ metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	out := &coordinationv1.Lease{}
	err := l.c.Put().Namespace(l.ns).Resource("leases").Name(lease.Name).Body(lease).Do(ctx).Into(out)
	return out, err
}

func (l leaseClient) List(ctx context.Context, opts metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	out := &coordinationv1.LeaseList{}
	err := l.c.Get().Namespace(l.ns).Resource("leases").VersionedParams(&opts, parameterCodec).Do(ctx).Into(out)
	return out, err
}
